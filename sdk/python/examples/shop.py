"""A minimal shop: POST /buy creates a Cauri checkout session and redirects
the customer to its page; POST /webhooks/cauri verifies the webhook and
fulfils the order. Standard library only (http.server).

    CAURI_SECRET_KEY=svc_test_sec_... python examples/shop.py
    # then point the workspace's webhook at http://<this host>:8000/webhooks/cauri

Environment: CAURI_SECRET_KEY (required), CAURI_BASE_URL (default
http://localhost:8080), SHOP_ADDR (default 127.0.0.1), SHOP_PORT (default 8000).
"""

import json
import os
import sys
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))  # not needed once installed
import cauri  # noqa: E402

SECRET = os.environ["CAURI_SECRET_KEY"]
client = cauri.Client(SECRET, base_url=os.environ.get("CAURI_BASE_URL", cauri.DEFAULT_BASE_URL))

ORDERS = {}  # order id -> {"amount", "status"}; your database in real life
LOCK = threading.Lock()


class Shop(BaseHTTPRequestHandler):
    def do_POST(self):
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))  # the raw bytes
        if self.path == "/buy":
            form = parse_qs(raw.decode())
            order_id = form.get("order_id", [uuid.uuid4().hex[:8]])[0]
            amount = int(form.get("amount", ["15000"])[0])  # whole XOF; in real life from your cart, not the form
            with LOCK:
                ORDERS[order_id] = {"amount": amount, "status": "pending"}
            session = client.sessions.create(
                amount=amount,
                currency="XOF",
                description="Order " + order_id,
                metadata={"order_id": order_id},
                success_url="http://%s/orders/%s" % (self.headers.get("Host"), order_id),
                idempotency_key="order-" + order_id,  # one per order: a retry never makes a second session
            )
            self.send_response(303)
            self.send_header("Location", session["url"])  # the hosted payment page
            self.end_headers()
        elif self.path == "/webhooks/cauri":
            try:
                event = cauri.verify_webhook(raw, self.headers, SECRET)
            except cauri.WebhookVerificationError as e:
                self.send_response(400)
                self.end_headers()
                self.wfile.write(e.reason.encode())
                return
            if event["event"] == "payment.completed" and event["data"]["metadata"].get("cauri_test_webhook") != "true":
                order_id = event["data"]["metadata"].get("order_id")
                with LOCK:  # fulfil once, whatever the number of deliveries
                    order = ORDERS.get(order_id)
                    if order and order["status"] == "pending" and event["data"]["amount"] == order["amount"]:
                        order["status"] = "paid"  # ship it
            self.send_response(204)  # acknowledge at once
            self.end_headers()
        else:
            self.send_error(404)

    def do_GET(self):
        if self.path.startswith("/orders/"):  # the success_url: show the order, never fulfil here
            with LOCK:
                order = ORDERS.get(self.path[len("/orders/"):])
            if order is None:
                self.send_error(404)
                return
            out = json.dumps(order).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(out)
        else:
            page = b'<form method="post" action="/buy"><input name="order_id" value="1042"><button>Pay 15 000 XOF</button></form>'
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.end_headers()
            self.wfile.write(page)

    def log_message(self, *args):
        pass


if __name__ == "__main__":
    server = ThreadingHTTPServer((os.environ.get("SHOP_ADDR", "127.0.0.1"), int(os.environ.get("SHOP_PORT", "8000"))), Shop)
    print("shop on http://%s:%d" % server.server_address, flush=True)
    server.serve_forever()
