"""A Cauri webhook endpoint as a Django view, in plain Python: paste
``cauri_webhook`` into your app's views.py and route it in urls.py:

    # urls.py
    from django.urls import path
    from . import views
    urlpatterns = [path("webhooks/cauri", views.cauri_webhook)]

Django's CSRF check must not apply to it (the signature is the check):
decorate it with django.views.decorators.csrf.csrf_exempt, as below when
Django is installed. request.body is the raw bytes, request.headers is
case-insensitive: exactly what verify_webhook takes.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))  # not needed once installed
import cauri  # noqa: E402

try:
    from django.http import HttpResponse
    from django.views.decorators.csrf import csrf_exempt
    from django.views.decorators.http import require_POST
except ImportError:  # Django is not installed here: the same shape, for the tests

    class HttpResponse:  # type: ignore[no-redef]
        def __init__(self, content=b"", status=200):
            self.content = content if isinstance(content, bytes) else str(content).encode()
            self.status_code = status

    def csrf_exempt(view):  # type: ignore[no-redef]
        return view

    def require_POST(view):  # type: ignore[no-redef]
        return view


def fulfil_order(order_id, session):
    """Your code: mark the order paid, once (the same event may come twice)."""
    FULFILLED.setdefault(order_id, session["id"])


FULFILLED = {}


@csrf_exempt
@require_POST
def cauri_webhook(request):
    try:
        event = cauri.verify_webhook(request.body, request.headers, os.environ["CAURI_SECRET_KEY"])
    except cauri.WebhookVerificationError as e:
        return HttpResponse(e.reason, status=400)
    session = event["data"]
    if event["event"] == "payment.completed" and session["metadata"].get("cauri_test_webhook") != "true":
        fulfil_order(session["metadata"].get("order_id"), session)
    return HttpResponse(status=204)
