"""The library against the service's own description, /v1/openapi.json:
every route is either called by the library or knowingly left out, and
every hand-kept model has the document's fields."""

import json
import typing
import unittest
import urllib.request

from tests import _service

import cauri
from cauri import models
from cauri.routes import ROUTES

# Routes the library does not call, and why (README.md, "Not covered").
NOT_COVERED = {
    # The partner API: a separate product with its own secret (x-partner-secret).
    ("POST", "/v1/partner/merchants"),
    ("GET", "/v1/partner/merchants"),
    ("GET", "/v1/partner/merchants/{id}"),
    ("PATCH", "/v1/partner/merchants/{id}"),
    ("POST", "/v1/partner/merchants/{id}/gateways"),
    ("GET", "/v1/partner/merchants/{id}/verification"),
    # The dashboard: HTML pages and forms for people, behind a sign-in.
    ("GET", "/dashboard/login"),
    ("POST", "/dashboard/login"),
    ("POST", "/dashboard/logout"),
    ("GET", "/dashboard"),
    ("GET", "/dashboard/transactions"),
    ("GET", "/dashboard/transactions/{id}"),
    ("POST", "/dashboard/transactions/{id}/refund"),
    ("GET", "/dashboard/links"),
    ("POST", "/dashboard/links"),
    ("POST", "/dashboard/links/{id}"),
    ("GET", "/dashboard/links/{id}/qr"),
    ("GET", "/dashboard/transfers"),
    ("GET", "/dashboard/webhooks"),
    ("POST", "/dashboard/webhooks"),
    ("POST", "/dashboard/webhooks/test"),
    ("POST", "/dashboard/deliveries/{id}/resend"),
    ("POST", "/dashboard/notifications/read"),
    ("POST", "/dashboard/notifications/{id}/read"),
    ("GET", "/dashboard/keys"),
    ("POST", "/dashboard/keys"),
    ("GET", "/dashboard/gateways"),
    ("POST", "/dashboard/gateways"),
    ("POST", "/dashboard/gateways/{id}"),
    ("POST", "/dashboard/gateways/{id}/operators"),
    ("GET", "/dashboard/team"),
    ("POST", "/dashboard/team"),
    ("POST", "/dashboard/team/invitations/{id}/revoke"),
    ("GET", "/dashboard/invitations/{token}"),
    ("POST", "/dashboard/invitations/{token}"),
    ("POST", "/dashboard/workspace"),
    # The hosted pages (the customer's browser) and their script's calls.
    ("GET", "/pay/{id}"),
    ("POST", "/pay/{id}"),
    ("GET", "/pay/l/{slug}"),
    ("POST", "/pay/l/{slug}"),
    ("POST", "/checkout/initiate"),
    ("POST", "/checkout/verify"),
    ("POST", "/checkout/code"),
    ("GET", "/static/logos/{file}"),
    # The aggregators' callbacks to the service.
    ("POST", "/callbacks/{gatewayId}"),
    ("PUT", "/callbacks/{gatewayId}"),
    ("GET", "/callbacks/{gatewayId}"),
    ("POST", "/callbacks/{gatewayId}/{segment}"),
    # Operations and this document.
    ("GET", "/v1/openapi.json"),
    ("GET", "/v1/openapi.yaml"),
    ("GET", "/docs"),
    ("GET", "/healthz"),
    ("GET", "/readyz"),
    ("GET", "/metrics"),
}

METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")


class ContractTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        svc = _service.shared()
        with urllib.request.urlopen(svc.base_url + "/v1/openapi.json", timeout=10) as r:
            cls.doc = json.load(r)

    def test_every_route_is_covered_or_knowingly_not(self):
        in_doc = {(m.upper(), p) for p, ops in self.doc["paths"].items() for m in ops if m in METHODS}
        unknown = in_doc - ROUTES - NOT_COVERED
        self.assertEqual(unknown, set(), "routes of openapi.json neither in cauri.routes.ROUTES nor in NOT_COVERED")
        self.assertEqual(ROUTES - in_doc, set(), "routes the library calls that the document lacks")
        self.assertEqual(NOT_COVERED - in_doc, set(), "stale NOT_COVERED entries")
        self.assertEqual(ROUTES & NOT_COVERED, set())

    def resolve(self, node):
        while "$ref" in node:
            node = self.pointer(node["$ref"][1:])
        return node

    def pointer(self, ptr):
        node = self.doc
        for part in ptr.strip("/").split("/"):
            node = node[part.replace("~1", "/").replace("~0", "~")]
        return node

    def test_models_have_the_documents_fields(self):
        for name, ptr in models.MODELS.items():
            with self.subTest(name):
                schema = self.resolve(self.pointer(ptr))
                cls = getattr(models, name)
                props = set(schema.get("properties", {}))
                self.assertTrue(props, ptr)
                self.assertEqual(set(cls.__required_keys__) | set(cls.__optional_keys__), props)
                self.assertEqual(set(cls.__required_keys__), set(schema.get("required", [])))

    def test_every_response_object_is_modelled(self):
        """Each JSON object schema a covered route answers with 2xx has a
        model (a new response schema needs one)."""
        modelled = {json.dumps(self.resolve(self.pointer(p)), sort_keys=True) for p in models.MODELS.values()}
        for method, path in sorted(ROUTES):
            op = self.doc["paths"][path][method.lower()]
            for status, res in op["responses"].items():
                if not status.startswith("2"):
                    continue
                schema = self.resolve(res).get("content", {}).get("application/json", {}).get("schema")
                if not schema:
                    continue
                schema = self.resolve(schema)
                variants = [self.resolve(s) for s in schema.get("oneOf", [schema])]
                for s in variants:
                    with self.subTest("%s %s %s" % (method, path, status)):
                        self.assertTrue(json.dumps(s, sort_keys=True) in modelled, "no model in cauri.models.MODELS for this answer")

    def test_enums_are_the_documents(self):
        for name, lit in models.ENUMS.items():
            with self.subTest(name):
                self.assertEqual(list(typing.get_args(lit)), self.doc["components"]["schemas"][name]["enum"])

    def test_models_resolve(self):
        for name in models.MODELS:
            typing.get_type_hints(getattr(models, name), vars(models))


class RateLimitTest(unittest.TestCase):
    """Its own service: the 61st session of a minute from one IP is a 429."""

    def test_61st_session_is_429(self):
        svc = _service.Service("Rate limited")
        self.addCleanup(svc.stop)
        client = cauri.Client(svc.keys["test_secret"], base_url=svc.base_url, max_retries=0)
        for i in range(60):
            client.sessions.create(amount=100)
        with self.assertRaises(cauri.CauriError) as cm:
            client.sessions.create(amount=100, idempotency_key="would-retry-but-max-retries-is-0")
        e = cm.exception
        self.assertEqual((e.status, e.code), (429, "rate_limited"))
        self.assertGreaterEqual(e.retry_after, 1)
        self.assertLessEqual(e.retry_after, 60)
        self.assertIn("60 a minute", e.message)
        # With retries, a Retry-After beyond max_retry_wait raises at once.
        impatient = cauri.Client(svc.keys["test_secret"], base_url=svc.base_url, max_retry_wait=0.5)
        with self.assertRaises(cauri.CauriError) as cm:
            impatient.sessions.create(amount=100, idempotency_key="k2")
        self.assertEqual(cm.exception.status, 429)
