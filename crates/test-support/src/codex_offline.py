"""Runs a command offline against a mock of the model APIs the real Codex CLI and Gemini CLI call.

Usage (always inside a fresh network namespace):

    unshare -n -- python3 codex_offline.py --port PORT --log FILE -- COMMAND [ARGS...]

It checks that the namespace holds the loopback interface alone, brings it up, serves the mock
on 127.0.0.1:PORT, runs COMMAND, then kills by pid every process left in this namespace (the
Codex app-server daemon included) and exits with COMMAND's exit code. Every request is appended
to FILE as one line, `METHOD PATH`.

The mock answers `POST /v1/responses` (the only request Codex 0.171 makes) with the server-sent
events of one assistant message: `response.created`, `response.output_item.added`,
`response.output_text.delta`, `response.output_item.done`, `response.completed` (with `usage`).
For Gemini CLI 0.61 (`GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:PORT`), it answers
`POST /v1beta/models/<model>:generateContent` (the model router's call, which wants a JSON object
with `complexity_reasoning` and `complexity_score`) and
`POST /v1beta/models/<model>:streamGenerateContent?alt=sse` (one `data:` event with the text `ok`
and `finishReason: STOP`). For GitHub Copilot CLI 1.0 (`COPILOT_PROVIDER_BASE_URL=http://127.0.0.1:PORT/v1`,
`COPILOT_PROVIDER_WIRE_API=completions`), it answers `POST /v1/chat/completions` with the
server-sent chunks of one assistant message `ok` (a role, the text, `finish_reason: stop` with
`usage`, then `data: [DONE]`). Anything else is a 404.

Exit codes of its own: 97 when the namespace is not isolated or loopback cannot be brought up,
98 when the command cannot be started.
"""

import argparse
import fcntl
import http.server
import json
import os
import signal
import socket
import socketserver
import struct
import subprocess
import sys
import threading
import time

SIOCGIFFLAGS = 0x8913
SIOCSIFFLAGS = 0x8914
IFF_UP = 0x1


def loopback_up():
    """Brings `lo` up with the ioctl `ip link set lo up` uses (no iproute2 needed)."""
    names = [name for _, name in socket.if_nameindex()]
    if names != ["lo"]:
        sys.stderr.write(
            f"codex_offline: this network namespace has interfaces {names}, not loopback alone; "
            "run it under `unshare -n`\n"
        )
        sys.exit(97)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        request = struct.pack("16sH", b"lo", 0)
        flags = struct.unpack("16sH", fcntl.ioctl(sock, SIOCGIFFLAGS, request)[:18])[1]
        fcntl.ioctl(sock, SIOCSIFFLAGS, struct.pack("16sH", b"lo", flags | IFF_UP))


def events():
    message = {
        "type": "message",
        "id": "msg_mock_1",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": "ok", "annotations": []}],
    }
    usage = {
        "input_tokens": 10,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 1,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 11,
    }
    return [
        ("response.created", {"response": {"id": "resp_mock_1"}}),
        (
            "response.output_item.added",
            {"output_index": 0, "item": {**message, "status": "in_progress", "content": []}},
        ),
        (
            "response.output_text.delta",
            {"item_id": "msg_mock_1", "output_index": 0, "content_index": 0, "delta": "ok"},
        ),
        ("response.output_item.done", {"output_index": 0, "item": message}),
        ("response.completed", {"response": {"id": "resp_mock_1", "usage": usage}}),
    ]


def chat_chunks():
    """The chat-completions stream of one assistant message `ok`, as `data:` events."""
    def chunk(delta, finish=None, usage=None):
        body = {
            "id": "chatcmpl-mock-1",
            "object": "chat.completion.chunk",
            "created": 1700000000,
            "model": "mock-model",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
        if usage is not None:
            body["usage"] = usage
        return body

    usage = {"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11}
    chunks = [
        chunk({"role": "assistant", "content": ""}),
        chunk({"content": "ok"}),
        chunk({}, "stop", usage),
    ]
    return "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"


def gemini_answer(text):
    """One candidate of the model's, with `text`, finished."""
    return {
        "candidates": [
            {"content": {"role": "model", "parts": [{"text": text}]}, "finishReason": "STOP", "index": 0}
        ],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 1, "totalTokenCount": 11},
        "modelVersion": "gemini-2.5-pro",
    }


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    log_file = None
    lock = threading.Lock()

    def log_message(self, *args):
        pass

    def note(self):
        with self.lock:
            self.log_file.write(f"{self.command} {self.path}\n")
            self.log_file.flush()

    def not_found(self):
        self.note()
        self.send_response(404)
        self.send_header("content-length", "0")
        self.end_headers()

    do_GET = not_found
    do_PUT = not_found
    do_DELETE = not_found

    def send_body(self, content_type, body):
        self.send_response(200)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def gemini(self):
        """Gemini's two calls; False when the path is neither."""
        path = self.path.split("?", 1)[0]
        if not path.startswith("/v1beta/models/"):
            return False
        if path.endswith(":generateContent"):
            text = json.dumps({"complexity_reasoning": "mock", "complexity_score": 1})
            self.note()
            self.send_body("application/json", json.dumps(gemini_answer(text)).encode())
            return True
        if path.endswith(":streamGenerateContent"):
            self.note()
            body = f"data: {json.dumps(gemini_answer('ok'))}\r\n\r\n".encode()
            self.send_body("text/event-stream", body)
            return True
        return False

    def do_POST(self):
        length = int(self.headers.get("content-length", 0))
        self.rfile.read(length)
        if self.gemini():
            return
        if self.path == "/v1/chat/completions":
            self.note()
            self.send_body("text/event-stream", chat_chunks().encode())
            return
        if self.path != "/v1/responses":
            self.not_found()
            return
        self.note()
        body = "".join(
            f"event: {name}\ndata: {json.dumps({'type': name, **data})}\n\n"
            for name, data in events()
        ).encode()
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


def processes_in_this_namespace():
    """The pids, other than this one, whose network namespace is this process's."""
    mine = os.readlink("/proc/self/ns/net")
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            if os.readlink(f"/proc/{entry}/ns/net") == mine:
                found.append(int(entry))
        except OSError:
            continue
    return found


def reap():
    """Kills, by pid, every process left in this namespace, until none is left."""
    for _ in range(50):
        left = processes_in_this_namespace()
        if not left:
            return
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for pid in left:
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                # Not ours to reap (the daemon, re-parented): give the kernel a moment.
                time.sleep(0.02)
    sys.stderr.write(f"codex_offline: processes still left: {processes_in_this_namespace()}\n")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--log", required=True)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    try:
        loopback_up()
    except OSError as error:
        sys.stderr.write(f"codex_offline: cannot bring up loopback: {error}\n")
        sys.exit(97)
    Handler.log_file = open(args.log, "a", encoding="utf-8")
    server = Server(("127.0.0.1", args.port), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        child = subprocess.Popen(command)
    except OSError as error:
        sys.stderr.write(f"codex_offline: cannot start {command}: {error}\n")
        sys.exit(98)
    # A signal to this launcher ends the command, then the cleanup runs.
    signal.signal(signal.SIGTERM, lambda *_: child.kill())
    code = child.wait()
    reap()
    server.shutdown()
    sys.exit(code if code >= 0 else 128 - code)


if __name__ == "__main__":
    main()
