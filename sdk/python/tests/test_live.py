"""The library against the real service: `cauri serve` (built by the test
run, SQLite), a local webhook receiver, the sandbox."""

import http.server
import json
import os
import queue
import subprocess
import sys
import threading
import time
import unittest
import urllib.error
import urllib.request
import uuid

from tests import _service

import cauri
from cauri import models

WAIT = 20  # seconds, at most, for a webhook


class Receiver:
    """A webhook receiver on 127.0.0.1: keeps each request's raw body and
    headers as received, answers 200."""

    def __init__(self):
        self.got = queue.Queue()
        got = self.got

        class H(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                got.put((self.path, self.headers, raw))
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *a):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.url = "http://127.0.0.1:%d/hooks" % self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()

    def wait_for(self, event_name, session_id, seconds=WAIT):
        deadline = time.monotonic() + seconds
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError("no %s webhook for %s within %ss" % (event_name, session_id, seconds))
            try:
                path, headers, raw = self.got.get(timeout=left)
            except queue.Empty:
                continue
            if headers.get("X-Service-Event") == event_name and session_id.encode() in raw:
                return headers, raw

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def new_workspace(svc, name, verified=False):
    args = [_service.binary(), "workspace", "create", "--name", name]
    if verified:
        args.append("--verified")
    out = subprocess.run(args, env=svc.env, cwd=svc.dir, capture_output=True, timeout=30, check=True)
    return json.loads(out.stdout)


def assert_model(test, obj, model):
    """obj has every required field of model, and no field model lacks."""
    keys = set(obj)
    test.assertLessEqual(set(model.__required_keys__), keys, model.__name__)
    test.assertLessEqual(keys, set(model.__required_keys__) | set(model.__optional_keys__), model.__name__)


class LiveTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.svc = _service.shared()
        cls.key = cls.svc.keys["test_secret"]
        cls.client = cauri.Client(cls.key, base_url=cls.svc.base_url, timeout=15)
        cls.receiver = Receiver()

    @classmethod
    def tearDownClass(cls):
        cls.receiver.close()

    def test_checkout_webhook_status_deliveries_refunds(self):
        c = self.client
        conf = c.webhook_config.update(webhookUrl=self.receiver.url)
        assert_model(self, conf, models.WebhookConfig)
        self.assertEqual(conf["testWebhookUrl"], self.receiver.url)
        self.assertEqual(c.webhook_config.get()["testWebhookUrl"], self.receiver.url)

        order = uuid.uuid4().hex[:10]
        sess = c.sessions.create(
            amount=15000, currency="XOF", description="2 pagnes wax", customer_email="awa@example.com",
            metadata={"order_id": order}, success_url="https://example.com/thanks", idempotency_key="order-" + order,
        )
        assert_model(self, sess, models.Session)
        info = cauri.response_info(sess)
        self.assertEqual((info.status_code, info.replayed), (201, False))
        self.assertTrue(info.request_id)
        self.assertEqual((sess["status"], sess["amount"], sess["livemode"]), ("PENDING", 15000, False))
        again = c.sessions.create(
            amount=15000, currency="XOF", description="2 pagnes wax", customer_email="awa@example.com",
            metadata={"order_id": order}, success_url="https://example.com/thanks", idempotency_key="order-" + order,
        )
        self.assertEqual(again["id"], sess["id"])
        self.assertTrue(cauri.response_info(again).replayed)

        methods = c.sessions.methods(sess["id"], country="ci")
        assert_model(self, methods, models.MethodList)
        self.assertTrue(methods["methods"])
        for meth in methods["methods"]:
            assert_model(self, meth, models.Method)

        settled = c.sandbox.settle(sess["id"], "succes")
        assert_model(self, settled, models.SandboxResponse)
        self.assertEqual(settled["status"], "SUCCESS")

        headers, raw = self.receiver.wait_for("payment.completed", sess["id"])
        event = cauri.verify_webhook(raw, headers, self.key)
        assert_model(self, event, models.PaymentEvent)
        assert_model(self, event["data"], models.Session)
        self.assertEqual((event["data"]["id"], event["data"]["status"], event["data"]["metadata"]["order_id"]), (sess["id"], "SUCCESS", order))
        with self.assertRaises(cauri.WebhookVerificationError) as cm:
            cauri.verify_webhook(raw + b" ", headers, self.key)
        self.assertEqual(cm.exception.reason, "bad_signature")
        with self.assertRaises(cauri.WebhookVerificationError) as cm:
            cauri.verify_webhook(raw, headers, self.key, now=time.time() + 301)
        self.assertEqual(cm.exception.reason, "too_old")

        # the Django-style view, given the request as received
        os.environ["CAURI_SECRET_KEY"] = self.key
        from examples import django_view

        class Request:  # what Django's HttpRequest offers the view
            method = "POST"

            def __init__(self, body, headers):
                self.body, self.headers = body, headers

        res = django_view.cauri_webhook(Request(raw, headers))
        self.assertEqual(res.status_code, 204)
        self.assertEqual(django_view.FULFILLED.get(order), sess["id"])
        res = django_view.cauri_webhook(Request(raw.replace(b"SUCCESS", b"SUCCES "), headers))
        self.assertEqual((res.status_code, res.content), (400, b"bad_signature"))
        res = django_view.cauri_webhook(Request(raw, {}))
        self.assertEqual((res.status_code, res.content), (400, b"no_signature"))

        status = c.sessions.status(sess["id"])
        assert_model(self, status, models.Session)
        self.assertEqual((status["status"], status["paid"], status["provider"]), ("SUCCESS", True, "sandbox"))

        deliveries = c.webhook_deliveries.list(transaction_id=sess["id"], event="payment.completed")
        assert_model(self, deliveries, models.DeliveryList)
        self.assertEqual(deliveries["count"], 1)
        d = deliveries["data"][0]
        assert_model(self, d, models.Delivery)
        self.assertEqual(d["id"], headers["X-Service-Delivery"])
        self.assertEqual(c.webhook_deliveries.get(d["id"])["transaction_id"], sess["id"])
        resent = c.webhook_deliveries.resend(d["id"])
        assert_model(self, resent, models.Delivery)
        self.assertEqual((resent["status"], resent["last_status_code"]), ("delivered", 200))
        self.assertGreaterEqual(resent["attempts"], 2)
        headers2, raw2 = self.receiver.wait_for("payment.completed", sess["id"])
        self.assertEqual(headers2["X-Service-Delivery"], d["id"])
        self.assertEqual(cauri.verify_webhook(raw2, headers2, self.key)["id"], event["id"])

        # refunds: a test payment's refund succeeds at once, through the sandbox
        r1 = c.refunds.create(transaction_id=sess["id"], amount=5000, reason="one pagne back", idempotency_key="refund-" + order)
        assert_model(self, r1, models.Refund)
        self.assertEqual((r1["status"], r1["amount"], r1["provider"]), ("succeeded", 5000, "sandbox"))
        self.assertEqual(cauri.response_info(r1).status_code, 201)
        r1b = c.refunds.create(transaction_id=sess["id"], amount=5000, reason="one pagne back", idempotency_key="refund-" + order)
        self.assertEqual(r1b["id"], r1["id"])
        self.assertTrue(cauri.response_info(r1b).replayed)
        r2 = c.refunds.create(transaction_id=sess["id"])  # the rest; a generated key
        self.assertEqual((r2["status"], r2["amount"]), ("succeeded", 10000))
        self.assertEqual(uuid.UUID(cauri.response_info(r2).idempotency_key).version, 4)
        self.assertEqual(c.refunds.get(r2["id"])["id"], r2["id"])
        listed = c.refunds.list(transaction_id=sess["id"])
        assert_model(self, listed, models.RefundList)
        self.assertEqual({r["id"] for r in listed["data"]}, {r1["id"], r2["id"]})
        self.assertEqual(c.sessions.status(sess["id"])["status"], "REFUNDED")
        with self.assertRaises(cauri.CauriError) as cm:
            c.refunds.create(transaction_id=sess["id"], amount=1)
        self.assertEqual((cm.exception.status, cm.exception.code, cm.exception.code_from_api), (400, "not_refundable", True))
        with self.assertRaises(cauri.CauriError) as cm:
            c.refunds.get("re_nope")
        self.assertEqual((cm.exception.status, cm.exception.code), (404, "refund_not_found"))

    def test_errors(self):
        bad = cauri.Client("svc_test_sec_" + "x" * 32, base_url=self.svc.base_url)
        with self.assertRaises(cauri.CauriError) as cm:
            bad.sessions.status("cs_nope")
        e = cm.exception
        self.assertEqual((e.status, e.code, e.message), (401, "unauthorized", "Invalid API Key"))
        self.assertTrue(e.request_id.startswith("req_"))
        with self.assertRaises(cauri.CauriError) as cm:
            bad.transfers.list()
        self.assertEqual((cm.exception.status, cm.exception.code, cm.exception.code_from_api), (401, "unauthorized", True))

        with self.assertRaises(cauri.CauriError) as cm:
            self.client.sessions.create(currency="XOF", description="no amount")
        e = cm.exception
        self.assertEqual((e.status, e.code), (400, "invalid_request"))
        self.assertIn("amount", e.message)  # the service names the field in its message (no param field)
        self.assertIn("amount", json.loads(e.body)["error"])
        with self.assertRaises(cauri.CauriError) as cm:
            self.client.sessions.create(amount=100, customer_email="not an address")
        self.assertIn("customer_email", cm.exception.message)

        with self.assertRaises(cauri.CauriError) as cm:
            self.client.sessions.status("cs_nope")
        self.assertEqual((cm.exception.status, cm.exception.code), (404, "not_found"))
        with self.assertRaises(cauri.CauriError) as cm:  # the page-error shape of /checkout/*
            self.client.sandbox.settle("cs_nope")
        self.assertEqual((cm.exception.status, cm.exception.code), (404, "not_found"))
        self.assertIn("cs_nope", cm.exception.message)
        with self.assertRaises(cauri.CauriError) as cm:
            self.client.webhook_config.update(webhookUrl="http://example.com/hooks")
        self.assertEqual(cm.exception.status, 400)
        with self.assertRaises(cauri.CauriError) as cm:  # the dashboard's cookie only
            self.client.transactions.export()
        self.assertEqual(cm.exception.status, 401)

    def test_transfers(self):
        c = self.client
        # A workspace in test mode sends no money: a defined 403, not retried.
        with self.assertRaises(cauri.CauriError) as cm:
            c.transfers.create(amount=1000, country="CI", operator="orange_money", phone="+2250707123456")
        self.assertEqual((cm.exception.status, cm.exception.code), (403, "identite_non_verifiee"))
        with self.assertRaises(cauri.CauriError) as cm:
            c.transfers.batch([{"amount": 1000, "country": "CI", "operator": "wave", "phone": "+2250707123456"}])
        self.assertEqual((cm.exception.status, cm.exception.code), (403, "identite_non_verifiee"))
        with self.assertRaises(cauri.CauriError) as cm:
            c.transfers.list()
        self.assertEqual((cm.exception.status, cm.exception.code), (403, "test_mode"))

        # A verified workspace's live key, with no gateway to pay out through.
        ws = new_workspace(self.svc, "Payouts", verified=True)
        live = cauri.Client(ws["keys"]["live_secret"], base_url=self.svc.base_url)
        opts = live.transfers.options()
        assert_model(self, opts, models.TransferOptions)
        self.assertEqual(live.transfers.list(limit=5), {"object": "list", "data": [], "count": 0})
        key = "payout-" + uuid.uuid4().hex
        for _ in range(2):  # refused before the key is taken: the same answer twice
            with self.assertRaises(cauri.CauriError) as cm:
                live.transfers.create(amount="1000", country="CI", operator="orange_money", phone="+2250707123456", idempotency_key=key)
            self.assertEqual(cm.exception.status, 400)
            self.assertTrue(cm.exception.code_from_api)
        code = cm.exception.code
        batch = live.transfers.batch([{"amount": 1000, "country": "CI", "operator": "orange_money", "phone": "+2250707123456"}])
        assert_model(self, batch, models.TransferBatch)
        self.assertEqual((batch["count"], batch["refused"]), (1, 1))
        assert_model(self, batch["data"][0], models.TransferBatchItem)
        self.assertEqual((batch["data"][0]["status"], batch["data"][0]["code"]), (400, code))
        with self.assertRaises(cauri.CauriError) as cm:
            live.transfers.recipient(country="CI", operator="orange_money", phone="+2250707123456")
        self.assertEqual((cm.exception.status, cm.exception.code), (400, code))
        with self.assertRaises(cauri.CauriError) as cm:
            live.transfers.get("tr_nope")
        self.assertEqual((cm.exception.status, cm.exception.code), (404, "transfert_introuvable"))

    def test_payment_links(self):
        with self.assertRaises(cauri.CauriError) as cm:
            self.client.payment_links.create(title="Pagne", amount=5000)
        self.assertEqual((cm.exception.status, cm.exception.code, cm.exception.code_from_api), (403, "test_mode", True))
        ws = new_workspace(self.svc, "Links", verified=True)
        live = cauri.Client(ws["keys"]["live_secret"], base_url=self.svc.base_url)
        page = live.payment_links.list(limit=10)
        assert_model(self, page, models.PaymentLinkList)
        self.assertEqual((page["count"], page["has_more"]), (0, False))
        self.assertEqual(list(live.payment_links.list_all()), [])
        with self.assertRaises(cauri.CauriError) as cm:  # no gateway collects XOF
            live.payment_links.create(title="Pagne", amount=5000, currency="XOF")
        self.assertEqual(cm.exception.status, 409)
        for call in (
            lambda: live.payment_links.get("pl_nope"),
            lambda: live.payment_links.update("pl_nope", active=False),
            lambda: live.payment_links.qr("pl_nope", format="png"),
            lambda: live.payment_links.check("pl_nope"),
        ):
            with self.assertRaises(cauri.CauriError) as cm:
                call()
            self.assertEqual(cm.exception.status, 404)

    def test_routing(self):
        r = self.client.routing.route(country="CI", amount=15000, availableProviders=["pawapay", "cinetpay"], phone="+2250707123456")
        assert_model(self, r, models.RouteResponse)
        assert_model(self, r["routing"], models.Routing)
        self.assertIn(r["routing"]["provider"], ("pawapay", "cinetpay"))
        o = self.client.routing.overview("CI", providers=["pawapay", "wave"])
        assert_model(self, o, models.RouteOverview)
        self.assertEqual(o["currency"], "XOF")
        for p in o["rankedProviders"]:
            assert_model(self, p, models.RankedProvider)
            self.assertNotIsInstance(p["score"], float)


class ShopExampleTest(unittest.TestCase):
    """examples/shop.py, run as a merchant runs it, driven as a customer."""

    def test_shop(self):
        svc = _service.shared()
        ws = new_workspace(svc, "Shop")
        key = ws["keys"]["test_secret"]
        port = _service.free_port()
        env = dict(os.environ, CAURI_SECRET_KEY=key, CAURI_BASE_URL=svc.base_url, SHOP_PORT=str(port))
        shop = subprocess.Popen(
            [sys.executable, os.path.join(_service.SDK_DIR, "examples", "shop.py")],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        )
        try:
            self.assertIn(b"shop on", shop.stdout.readline())
            base = "http://127.0.0.1:%d" % port
            client = cauri.Client(key, base_url=svc.base_url)
            client.webhook_config.update(webhookUrl=base + "/webhooks/cauri")

            class NoRedirect(urllib.request.HTTPRedirectHandler):
                def redirect_request(self, *a):
                    return None

            opener = urllib.request.build_opener(NoRedirect())
            with self.assertRaises(urllib.error.HTTPError) as cm:
                opener.open(base + "/buy", data=b"order_id=A77&amount=2500", timeout=10)
            self.assertEqual(cm.exception.code, 303)
            location = cm.exception.headers["Location"]
            self.assertTrue(location.startswith(svc.base_url + "/pay/cs_"), location)
            session_id = location.rsplit("/", 1)[1]
            self.assertEqual(json.load(urllib.request.urlopen(base + "/orders/A77", timeout=5))["status"], "pending")
            client.sandbox.settle(session_id)
            deadline = time.monotonic() + WAIT
            while json.load(urllib.request.urlopen(base + "/orders/A77", timeout=5))["status"] != "paid":
                self.assertLess(time.monotonic(), deadline, "the shop did not fulfil the order")
                time.sleep(0.1)
            # a forged webhook is refused
            req = urllib.request.Request(base + "/webhooks/cauri", data=b"{}", headers={"X-Service-Signature": "t=1,v1=00"})
            with self.assertRaises(urllib.error.HTTPError) as cm:
                urllib.request.urlopen(req, timeout=5)
            self.assertEqual(cm.exception.code, 400)
        finally:
            shop.terminate()
            shop.wait(10)
            shop.stdout.close()
