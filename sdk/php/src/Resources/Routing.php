<?php

declare(strict_types=1);

namespace Cauri\Resources;

use Cauri\Models\RouteOverview;
use Cauri\Models\RouteResponse;

/** Which provider for a payment: $cauri->routing. */
final class Routing extends Resource
{
    /**
     * POST /v1/route (secret key). Not retried (no Idempotency-Key on this route; it is a pure read
     * in effect, but the rule is the rule).
     *
     * @param array{country: string, amount: int|string, availableProviders: list<string>, currency?: string,
     *        paymentMethod?: string, phone?: string} $params wire names (camelCase)
     */
    public function route(array $params): RouteResponse
    {
        return self::model(RouteResponse::class, $this->client->request('POST /v1/route', body: $params));
    }

    /**
     * GET /v1/route: a country's methods and providers ranked.
     *
     * @param array{country: string, providers?: string, currency?: string} $query
     */
    public function overview(array $query): RouteOverview
    {
        return self::model(RouteOverview::class, $this->client->request('GET /v1/route', query: $query));
    }
}
