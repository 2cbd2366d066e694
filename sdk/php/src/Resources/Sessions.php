<?php

declare(strict_types=1);

namespace Cauri\Resources;

use Cauri\Models\MethodList;
use Cauri\Models\Session;

/** Checkout sessions: $cauri->sessions. */
final class Sessions extends Resource
{
    /**
     * POST /v1/checkout/sessions. Send the customer to $session->url; fulfil on
     * the payment.completed webhook or status(), never on the redirect.
     *
     * @param array{amount: int|string, currency?: string, customer_name?: string, customer_email?: string,
     *        customer_phone?: string, description?: string, success_url?: string, cancel_url?: string,
     *        metadata?: array<string, string>, merchant_name?: string, merchant_logo?: string, expires_at?: string} $params
     * @param string|null $idempotencyKey one per order (e.g. "order-1042"): a retry or a replay answers the
     *        same session (replayed() true); without one the call is never retried
     */
    public function create(array $params, ?string $idempotencyKey = null): Session
    {
        return self::model(Session::class, $this->client->request('POST /v1/checkout/sessions', body: $params, idempotencyKey: $idempotencyKey));
    }

    /** GET /v1/checkout/sessions/{id}/status: the whole session (status, paid, livemode). */
    public function status(string $id): Session
    {
        return self::model(Session::class, $this->client->request('GET /v1/checkout/sessions/{id}/status', ['id' => $id]));
    }

    /** Alias of status(). */
    public function retrieve(string $id): Session
    {
        return $this->status($id);
    }

    /** GET /v1/checkout/sessions/{id}/methods, of one country when given (code or name). */
    public function methods(string $id, ?string $country = null): MethodList
    {
        return self::model(MethodList::class, $this->client->request('GET /v1/checkout/sessions/{id}/methods', ['id' => $id], ['country' => $country]));
    }
}
