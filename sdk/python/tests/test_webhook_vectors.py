"""The shared webhook vectors (sdk/testdata/webhook-vectors.json, generated
by the Go package's tests): every library gives the same outcome."""

import datetime
import json
import os
import unittest

from tests import _service  # noqa: F401  (puts src on sys.path)

import cauri
from cauri import WebhookVerificationError, verify_signature, verify_webhook


def load_vectors():
    path = os.environ.get("CAURI_SDK_VECTORS") or os.path.join(_service.SDK_DIR, "..", "testdata", "webhook-vectors.json")
    with open(path, encoding="utf-8") as f:
        return json.load(f)["vectors"]


class VectorsTest(unittest.TestCase):
    def test_every_vector(self):
        vectors = load_vectors()
        self.assertGreater(len(vectors), 10)
        outcomes = set()
        for v in vectors:
            with self.subTest(v["name"]):
                body = v["body"].encode("utf-8")
                outcomes.add(v["error"])
                if v["error"] == "":
                    event = verify_webhook(body, v["headers"], v["secret"], now=v["now"])
                    if body:
                        self.assertEqual(event, json.loads(body))
                    else:
                        self.assertIsNone(event)
                    # the same as text, and with headers lowercased as many frameworks give them
                    lower = {k.lower(): x for k, x in v["headers"].items()}
                    verify_signature(v["body"], lower, v["secret"], now=v["now"])
                else:
                    with self.assertRaises(WebhookVerificationError) as cm:
                        verify_webhook(body, v["headers"], v["secret"], now=v["now"])
                    self.assertEqual(cm.exception.reason, v["error"])
                    self.assertEqual(cm.exception.code, v["error"])
                    self.assertIsInstance(cm.exception, cauri.CauriError)
        self.assertEqual(outcomes, {"", "no_signature", "bad_signature", "too_old"})

    def test_header_shapes(self):
        v = next(x for x in load_vectors() if x["name"] == "valid")
        body, secret, now = v["body"].encode(), v["secret"], v["now"]
        sig = v["headers"]["X-Service-Signature"]
        # a WSGI environ / Django request.META
        verify_signature(body, {"HTTP_X_SERVICE_SIGNATURE": sig}, secret, now=now)
        # ASGI: a list of (bytes, bytes)
        verify_signature(body, [(b"x-service-signature", sig.encode())], secret, now=now)
        # several values for one name: the first, as Go's Header.Get
        verify_signature(body, {"x-service-signature": [sig, "t=1,v1=00"]}, secret, now=now)
        # a clock as an aware datetime
        verify_signature(body, v["headers"], secret, now=datetime.datetime.fromtimestamp(now, datetime.timezone.utc))
        # the receiver holds two keys (its own roll): either verifies
        verify_signature(body, v["headers"], ["svc_test_sec_other", secret], now=now)
        # sign() makes what the service sends
        self.assertEqual(cauri.sign_webhook(body, secret, 1795000000), sig)

    def test_amounts_are_never_floats(self):
        secret = "svc_test_sec_x"
        body = b'{"data":{"amount":15.5,"n":2}}'
        h = {"X-Service-Signature": cauri.sign_webhook(body, secret)}
        event = verify_webhook(body, h, secret)
        self.assertEqual(str(event["data"]["amount"]), "15.5")
        self.assertNotIsInstance(event["data"]["amount"], float)
        self.assertIsInstance(event["data"]["n"], int)
