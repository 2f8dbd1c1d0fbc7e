"""A scripted OpenAI-compatible chat-completions server on 127.0.0.1 for tests of the real-model
path (issue 18): inspect's own `openai-api/<service>/<model>` provider talks HTTP to it, so
retries, timeouts, usage parsing and error handling are inspect's and the openai SDK's, not a mock's.

`FakeOpenAI(script)` serves ``POST /v1/chat/completions``; `script(request_json, n)` (n = the
0-based request number) returns one of:
- a dict: a chat.completion body (use `completion`), sent with status 200;
- ``(status, dict)``: that status and JSON body (e.g. ``(500, {...})``);
- ``("hang", seconds)``: read the request, then send nothing for that long (a runaway generation
  or a stuck server), then close the connection.
Every request is kept in `requests` (json) with its arrival time in `times` (monotonic seconds).
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["FakeOpenAI", "completion", "dead_port", "tool_call"]


def tool_call(name: str, arguments: str, call_id: str) -> dict[str, Any]:
    """One tool call of an assistant message; `arguments` is the raw JSON text (may be malformed)."""
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def completion(content: str | None = "", *, tool_calls: list[dict[str, Any]] | None = None,
               finish_reason: str = "stop", prompt_tokens: int = 100, completion_tokens: int = 10,
               cached_tokens: int | None = None, model: str = "fake") -> dict[str, Any]:
    """A chat.completion body with usage (``prompt_tokens_details.cached_tokens`` when given)."""
    usage: dict[str, Any] = {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                             "total_tokens": prompt_tokens + completion_tokens}
    if cached_tokens is not None:
        usage["prompt_tokens_details"] = {"cached_tokens": cached_tokens}
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = tool_calls
        finish_reason = "tool_calls" if finish_reason == "stop" else finish_reason
    return {"id": "chatcmpl-fake", "object": "chat.completion", "created": int(time.time()), "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}], "usage": usage}


def dead_port() -> int:
    """A 127.0.0.1 port nothing listens on (bound, then closed)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class FakeOpenAI:
    """The server (a context manager): ``with FakeOpenAI(script) as srv: srv.base_url``."""

    def __init__(self, script: Callable[[dict[str, Any], int], Any]) -> None:
        self.script = script
        self.requests: list[dict[str, Any]] = []
        self.times: list[float] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                with outer._lock:
                    n = len(outer.requests)
                    outer.requests.append(body)
                    outer.times.append(time.monotonic())
                reply = outer.script(body, n)
                if isinstance(reply, tuple) and reply[0] == "hang":
                    outer._stop.wait(float(reply[1]))
                    self.close_connection = True
                    return
                status, payload = reply if isinstance(reply, tuple) else (200, reply)
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``."""
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> FakeOpenAI:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._server.shutdown()
        self._server.server_close()
