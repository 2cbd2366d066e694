"""One HTTP call with the library's rules: the key, the Idempotency-Key,
retries with backoff, and errors as CauriError."""

import random
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from typing import Any, Callable, Dict, Iterator, Mapping, Optional, Tuple

from . import _json
from .errors import CauriConnectionError, CauriError
from .routes import GENERATED_KEY_ROUTES, ROUTES

__version__ = "0.1.0"
USER_AGENT = "cauri-python/" + __version__


class ApiResult(dict):  # type: ignore[type-arg]
    """A decoded JSON object of an answer: a dict, plus what the answer's
    headers said (read it with cauri.response_info)."""

    status_code: int = 0
    request_id: Optional[str] = None
    replayed: bool = False
    idempotency_key: Optional[str] = None


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, req, fp, code, msg, headers, newurl):  # type: ignore[no-untyped-def]
        return None


class Transport:
    def __init__(
        self,
        key: Optional[str],
        base_url: str,
        timeout: float,
        max_retries: int,
        max_retry_wait: float,
        retry_base_delay: float,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.key = key
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self.max_retries = max_retries
        self.max_retry_wait = max_retry_wait
        self.retry_base_delay = retry_base_delay
        self.sleep = sleep
        self._opener = urllib.request.build_opener(_NoRedirect())

    # -- the rules -------------------------------------------------------

    @staticmethod
    def retryable(method: str, idempotency_key: Optional[str]) -> bool:
        """GET, HEAD, PUT, DELETE and PATCH (every PATCH of this API sets
        values: sending it twice changes nothing more) are retried; a POST
        only when it carries an Idempotency-Key."""
        if method in ("GET", "HEAD", "PUT", "DELETE", "PATCH"):
            return True
        return bool(idempotency_key)

    def backoff(self, attempt: int, retry_after: Optional[int]) -> Optional[float]:
        """Seconds to wait before retry number attempt+1, or None to give up
        (a Retry-After longer than max_retry_wait)."""
        if retry_after is not None:
            if retry_after > self.max_retry_wait:
                return None
            return float(retry_after)
        # Exponential, with "equal jitter": half fixed, half random.
        d = min(self.max_retry_wait, self.retry_base_delay * (2 ** attempt))
        return d / 2 + random.uniform(0, d / 2)

    # -- a call ----------------------------------------------------------

    def request(
        self,
        method: str,
        template: str,
        path_params: Optional[Mapping[str, str]] = None,
        query: Optional[Mapping[str, Any]] = None,
        body: Any = None,
        idempotency_key: Optional[str] = None,
        headers: Optional[Mapping[str, str]] = None,
        raw: bool = False,
        stream: bool = False,
        auth: bool = True,
    ) -> Any:
        if (method, template) not in ROUTES:
            raise ValueError("cauri: %s %s is not in the route table" % (method, template))
        path = template
        for k, v in (path_params or {}).items():
            if not v:
                raise ValueError("cauri: %s must not be empty" % k)
            path = path.replace("{" + k + "}", urllib.parse.quote(str(v), safe=""))
        url = self.base_url + path
        if query:
            q = [(k, _query_value(v)) for k, v in query.items() if v is not None]
            if q:
                url += "?" + urllib.parse.urlencode(q)
        if idempotency_key is None and method == "POST" and template in GENERATED_KEY_ROUTES:
            idempotency_key = str(uuid.uuid4())  # uuid4 draws from os.urandom
        data = _json.dumps(body) if body is not None else None
        h: Dict[str, str] = {"User-Agent": USER_AGENT, "Accept": "*/*" if raw or stream else "application/json"}
        if data is not None:
            h["Content-Type"] = "application/json"
        if auth and self.key:
            h["Authorization"] = "Bearer " + self.key
        if idempotency_key:
            h["Idempotency-Key"] = idempotency_key
        h.update(headers or {})

        retry = self.retryable(method, idempotency_key)
        attempt = 0
        while True:
            req = urllib.request.Request(url, data=data, headers=h, method=method)
            try:
                res = self._opener.open(req, timeout=self.timeout)
            except urllib.error.HTTPError as e:
                status, res_headers = e.code, dict(e.headers.items())
                try:
                    payload = e.read()
                except Exception:  # the connection broke while reading the error
                    payload = b""
                finally:
                    e.close()
                err = CauriError._from_response(status, payload, res_headers)
                again = retry and attempt < self.max_retries and _retry_status(status, err.code)
                wait = self.backoff(attempt, err.retry_after) if again else None
                if wait is None:
                    raise err
                self.sleep(wait)
                attempt += 1
                continue
            except (urllib.error.URLError, socket.timeout, ConnectionError, OSError) as e:
                reason = getattr(e, "reason", e)
                timeout = isinstance(reason, socket.timeout) or "timed out" in str(reason)
                err = CauriConnectionError(
                    "no answer from %s: %s" % (self.base_url, reason),
                    status=0,
                    code="timeout" if timeout else "connection_error",
                )
                if not (retry and attempt < self.max_retries):
                    raise err from e
                wait = self.backoff(attempt, None)
                self.sleep(wait or 0)
                attempt += 1
                continue
            if stream:
                return _stream(res)
            try:
                payload = res.read()
            except (OSError, socket.timeout) as e:
                res.close()
                raise CauriConnectionError("answer cut short: %s" % e, status=0, code="connection_error") from e
            res.close()
            if raw:
                return payload
            result = ApiResult(_json.loads(payload)) if payload else ApiResult()
            result.status_code = res.status
            result.request_id = res.headers.get("X-Request-Id")
            result.replayed = res.headers.get("Idempotent-Replayed") == "true"
            result.idempotency_key = idempotency_key
            return result


def _retry_status(status: int, code: Optional[str]) -> bool:
    if status == 429 or status >= 500:
        return True
    # The first request with this key is still running (transfers): the
    # answer says to retry after Retry-After.
    return status == 409 and code == "idempotency_key_in_use"


def _query_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (list, tuple)):
        return ",".join(str(x) for x in v)
    return str(v)


def _stream(res: Any) -> Iterator[bytes]:
    try:
        while True:
            chunk = res.read(64 * 1024)
            if not chunk:
                return
            yield chunk
    finally:
        res.close()


def info(obj: Any) -> Tuple[int, Optional[str], bool, Optional[str]]:
    return (
        getattr(obj, "status_code", 0),
        getattr(obj, "request_id", None),
        getattr(obj, "replayed", False),
        getattr(obj, "idempotency_key", None),
    )
