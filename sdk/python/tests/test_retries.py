"""The library's own retry and idempotency logic, against a tiny fake
server on 127.0.0.1 (the API itself is tested against the real service)."""

import http.server
import json
import threading
import time
import unittest
import uuid

from tests import _service  # noqa: F401

import cauri


class Fake:
    """Answers each request with the next of a script of (status, headers,
    body), recording the requests."""

    def __init__(self):
        self.script = []
        self.requests = []
        fake = self

        class H(http.server.BaseHTTPRequestHandler):
            def _any(self):
                n = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(n) if n else b""
                fake.requests.append((self.command, self.path, dict(self.headers.items()), body, time.monotonic()))
                status, headers, out = fake.script.pop(0) if fake.script else (200, {}, {})
                raw = json.dumps(out).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                for k, v in headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(raw)

            do_GET = do_POST = do_PATCH = _any

            def log_message(self, *a):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.url = "http://127.0.0.1:%d" % self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


TRANSFER = {"id": "tr_1", "object": "transfer", "status": "processing", "amount": 1000}


class RetryTest(unittest.TestCase):
    def setUp(self):
        self.fake = Fake()
        self.addCleanup(self.fake.close)
        self.client = cauri.Client("svc_test_sec_fake", base_url=self.fake.url, retry_base_delay=0.01, timeout=5)

    def test_503_then_200_is_retried_with_the_same_generated_key(self):
        self.fake.script = [(503, {}, {"error": "down"}), (502, {}, {"error": "down"}), (201, {}, TRANSFER)]
        tr = self.client.transfers.create(amount=1000, country="CI", operator="orange_money", phone="+2250707000000")
        self.assertEqual(tr["id"], "tr_1")
        self.assertEqual(len(self.fake.requests), 3)
        keys = {r[2].get("Idempotency-Key") for r in self.fake.requests}
        self.assertEqual(len(keys), 1)
        key = keys.pop()
        self.assertEqual(uuid.UUID(key).version, 4)
        self.assertEqual(cauri.response_info(tr).idempotency_key, key)
        self.assertEqual(cauri.response_info(tr).status_code, 201)
        # each call gets its own key
        self.client.transfers.create(amount=1000, country="CI", operator="orange_money", phone="+2250707000000")
        self.assertNotEqual(self.fake.requests[-1][2]["Idempotency-Key"], key)
        # the body: amounts as JSON numbers, the key in the header
        self.assertEqual(json.loads(self.fake.requests[0][3])["amount"], 1000)
        self.assertEqual(self.fake.requests[0][2]["Authorization"], "Bearer svc_test_sec_fake")

    def test_generated_keys_on_batch_and_refunds(self):
        self.fake.script = [(500, {}, {"error": "x"}), (200, {}, {"object": "transfer_batch"}), (500, {}, {"error": "x"}), (201, {}, {"id": "re_1"})]
        self.client.transfers.batch([{"amount": "1000", "country": "CI", "operator": "wave", "phone": "+2250707000000"}])
        self.client.refunds.create(transaction_id="cs_1")
        r = self.fake.requests
        self.assertEqual([x[1] for x in r], ["/v1/transfers/batch"] * 2 + ["/v1/refunds"] * 2)
        self.assertEqual(r[0][2]["Idempotency-Key"], r[1][2]["Idempotency-Key"])
        self.assertEqual(r[2][2]["Idempotency-Key"], r[3][2]["Idempotency-Key"])
        self.assertNotEqual(r[0][2]["Idempotency-Key"], r[2][2]["Idempotency-Key"])
        # a string of digits for an amount goes as a number
        self.assertEqual(r[0][3], b'{"transfers":[{"amount":1000,"country":"CI","operator":"wave","phone":"+2250707000000"}]}')

    def test_callers_key_is_sent_and_reused(self):
        self.fake.script = [(429, {}, {"error": "slow down"}), (201, {}, {"id": "cs_1"})]
        self.client.sessions.create(amount=100, idempotency_key="order-7")
        self.assertEqual([x[2].get("Idempotency-Key") for x in self.fake.requests], ["order-7", "order-7"])

    def test_post_without_key_is_not_retried(self):
        for call in (
            lambda: self.client.sessions.create(amount=100),
            lambda: self.client.webhook_deliveries.resend("whd_1"),
            lambda: self.client.sandbox.settle("cs_1"),
            lambda: self.client.routing.route(country="CI", amount=100, availableProviders=["pawapay"]),
        ):
            self.fake.requests.clear()
            self.fake.script = [(503, {}, {"error": "down"}), (200, {}, {})]
            with self.assertRaises(cauri.CauriError) as cm:
                call()
            self.assertEqual(cm.exception.status, 503)
            self.assertEqual(len(self.fake.requests), 1)
            self.assertNotIn("Idempotency-Key", self.fake.requests[0][2])
        self.fake.script = []

    def test_get_and_patch_are_retried_up_to_max_retries(self):
        self.fake.script = [(500, {}, {"error": "a"})] * 3
        with self.assertRaises(cauri.CauriError) as cm:
            self.client.sessions.status("cs_1")
        self.assertEqual((cm.exception.status, cm.exception.code), (500, "internal"))
        self.assertEqual(len(self.fake.requests), 3)  # 1 + max_retries (2)
        self.fake.requests.clear()
        self.fake.script = [(503, {}, {"error": "a"}), (200, {}, {"success": True})]
        self.client.webhook_config.update(webhookUrl="https://example.com/h")
        self.assertEqual([x[0] for x in self.fake.requests], ["PATCH", "PATCH"])

    def test_4xx_is_not_retried(self):
        self.fake.script = [(400, {"X-Request-Id": "req_1"}, {"error": "amount is required"})]
        with self.assertRaises(cauri.CauriError) as cm:
            self.client.sessions.create(currency="XOF", idempotency_key="k")
        e = cm.exception
        self.assertEqual((e.status, e.code, e.code_from_api, e.message, e.request_id), (400, "invalid_request", False, "amount is required", "req_1"))
        self.assertEqual(len(self.fake.requests), 1)

    def test_retry_after_is_honoured(self):
        self.fake.script = [(429, {"Retry-After": "1"}, {"error": "slow", "code": "rate_limited"}), (200, {}, TRANSFER)]
        start = time.monotonic()
        self.client.transfers.get("tr_1")
        self.assertEqual(len(self.fake.requests), 2)
        gap = self.fake.requests[1][4] - self.fake.requests[0][4]
        self.assertGreaterEqual(gap, 0.95)
        self.assertLess(time.monotonic() - start, 3)

    def test_retry_after_beyond_max_wait_raises_at_once(self):
        client = cauri.Client("k", base_url=self.fake.url, max_retry_wait=2)
        self.fake.script = [(429, {"Retry-After": "30"}, {"error": "slow", "code": "rate_limited"})]
        start = time.monotonic()
        with self.assertRaises(cauri.CauriError) as cm:
            client.transfers.get("tr_1")
        self.assertEqual((cm.exception.status, cm.exception.code, cm.exception.retry_after), (429, "rate_limited", 30))
        self.assertLess(time.monotonic() - start, 1)
        self.assertEqual(len(self.fake.requests), 1)

    def test_max_retries_zero(self):
        client = cauri.Client("k", base_url=self.fake.url, max_retries=0)
        self.fake.script = [(503, {}, {"error": "down"})]
        with self.assertRaises(cauri.CauriError):
            client.transfers.create(amount=1, country="CI", operator="wave", phone="+2250707000000")
        self.assertEqual(len(self.fake.requests), 1)

    def test_page_error_shape(self):
        self.fake.script = [(409, {}, {"success": False, "message": "Session already paid"})]
        with self.assertRaises(cauri.CauriError) as cm:
            self.client.sandbox.settle("cs_1")
        self.assertEqual((cm.exception.status, cm.exception.message, cm.exception.code), (409, "Session already paid", "conflict"))
        self.assertNotIn("Authorization", self.fake.requests[0][2])

    def test_network_error_is_retried_then_raised(self):
        port = _service.free_port()  # nothing listens there
        client = cauri.Client("k", base_url="http://127.0.0.1:%d" % port, retry_base_delay=0.01)
        with self.assertRaises(cauri.CauriConnectionError) as cm:
            client.refunds.create(transaction_id="cs_1")
        self.assertEqual(cm.exception.status, 0)
        self.assertEqual(cm.exception.code, "connection_error")
        self.assertIsInstance(cm.exception, cauri.CauriError)

    def test_floats_are_refused(self):
        with self.assertRaises(TypeError):
            self.client.sessions.create(amount=15.5)
        with self.assertRaises(ValueError):
            self.client.sessions.create(amount="15,5")
        self.assertEqual(self.fake.requests, [])
        # metadata is the caller's strings, even under a key named amount
        self.fake.script = [(201, {}, {"id": "cs_1"})]
        from decimal import Decimal

        self.client.sessions.create(amount=Decimal("15.50"), currency="GHS", metadata={"amount": "two pagnes"})
        self.assertEqual(self.fake.requests[0][3], b'{"amount":15.50,"currency":"GHS","metadata":{"amount":"two pagnes"}}')

    def test_backoff_grows_with_jitter(self):
        t = self.client._t
        t.retry_base_delay = 1.0
        for attempt in range(4):
            d = t.backoff(attempt, None)
            self.assertGreaterEqual(d, 2 ** attempt / 2)
            self.assertLessEqual(d, 2 ** attempt)
        self.assertEqual(t.backoff(0, 7), 7.0)
        self.assertIsNone(t.backoff(0, 61))


class RouteTableTest(unittest.TestCase):
    """Every route of cauri.routes.ROUTES has a method that calls it."""

    def test_every_route_has_a_method(self):
        import re

        fake = Fake()
        self.addCleanup(fake.close)
        c = cauri.Client("k", base_url=fake.url, max_retries=0)
        calls = [
            lambda: c.sessions.create(amount=1),
            lambda: c.sessions.status("cs_1"),
            lambda: c.sessions.methods("cs_1", country="ci"),
            lambda: c.sandbox.settle("cs_1", "echec"),
            lambda: c.webhook_config.get(),
            lambda: c.webhook_config.update(events=["payment.completed"]),
            lambda: c.webhook_deliveries.list(limit=5),
            lambda: c.webhook_deliveries.get("whd_1"),
            lambda: c.webhook_deliveries.resend("whd_1"),
            lambda: c.payment_links.create(title="t", amount=1),
            lambda: c.payment_links.list(limit=1),
            lambda: c.payment_links.get("pl_1"),
            lambda: c.payment_links.update("pl_1", expires_at=None),
            lambda: c.payment_links.qr("pl_1"),
            lambda: c.payment_links.check("pl_1"),
            lambda: c.transactions.export(dashboard_session="s", format="csv", from_="2026-01-01"),
            lambda: c.routing.route(country="CI", amount=1, availableProviders=["wave"]),
            lambda: c.routing.overview("CI"),
            lambda: c.transfers.create(amount=1, country="CI", operator="wave", phone="+2250707000000"),
            lambda: c.transfers.list(status="failed"),
            lambda: c.transfers.options(),
            lambda: c.transfers.batch([]),
            lambda: c.transfers.recipient(country="CI", operator="wave", phone="+2250707000000"),
            lambda: c.transfers.get("tr_1"),
            lambda: c.refunds.create(transaction_id="cs_1"),
            lambda: c.refunds.list(status="pending"),
            lambda: c.refunds.get("re_1"),
        ]
        for call in calls:
            call()
        seen = set()
        for method, path, headers, body, _ in fake.requests:
            path = path.split("?")[0]
            for m, template in cauri.ROUTES:
                if m == method and re.fullmatch(re.sub(r"\{[^}]+\}", "[^/]+", template), path):
                    seen.add((m, template))
        self.assertEqual(seen, set(cauri.ROUTES))
        q = {r[1] for r in fake.requests}
        self.assertIn("/v1/transfers?options=1", q)
        self.assertIn("/v1/transactions/export?format=csv&from=2026-01-01", q)
        export = next(r for r in fake.requests if r[1].startswith("/v1/transactions/export"))
        self.assertEqual(export[2]["Cookie"], "cauri_session=s")
        patch = next(r for r in fake.requests if r[0] == "PATCH" and r[1] == "/v1/payment-links/pl_1")
        self.assertEqual(patch[3], b'{"expires_at":null}')
