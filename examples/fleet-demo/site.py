#!/usr/bin/env python3
"""The site the fleet demo checks (examples/fleet-demo.sh), served from a container under
several host names: a page's path says what it answers, so the list is its own truth.

    /alive/N     200                                  -> alive
    /slow/N      200 after 1 s                        -> alive
    /redirect/N  301 to /alive/N                      -> alive
    /dead/N      404                                  -> dead
    /gone/N      410                                  -> dead
    /blocked/N   403                                  -> blocked
"""
import http.server
import time

STATUS = {"alive": 200, "slow": 200, "redirect": 301, "dead": 404, "gone": 410, "blocked": 403}


class Page(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def answer(self, body):
        parts = self.path.split("/")
        kind = parts[1] if len(parts) > 2 else ""
        status = STATUS.get(kind, 404)
        if kind == "slow":
            time.sleep(1)
        payload = f"<!doctype html><title>{kind}</title><p>{self.path}</p>\n".encode()
        self.send_response(status)
        if kind == "redirect":
            self.send_header("Location", "/alive/" + parts[2])
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        if body:
            self.wfile.write(payload)

    def do_GET(self):
        self.answer(True)

    def do_HEAD(self):
        self.answer(False)

    def log_message(self, *args):
        pass


http.server.ThreadingHTTPServer(("0.0.0.0", 8000), Page).serve_forever()
