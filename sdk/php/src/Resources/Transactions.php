<?php

declare(strict_types=1);

namespace Cauri\Resources;

/** The transactions export: $cauri->transactions. */
final class Transactions extends Resource
{
    /**
     * GET /v1/transactions/export. The service serves it to the dashboard's
     * session only (cookie cauri_session): with an API key it answers 401.
     * Pass $dashboardSession (the cookie's value) to export: the key is then
     * left out of the request. The workspace and the mode are the ones selected
     * in that dashboard session. The CSV (or JSON
     * with format=json) is returned as a string, or streamed into $into (a
     * writable stream) when given, and '' returned.
     *
     * @param array{format?: 'csv'|'json', status?: string, from?: string, to?: string, search?: string} $query
     * @param resource|null $into
     */
    public function export(array $query = [], ?string $dashboardSession = null, $into = null): string
    {
        $headers = ['Accept' => 'text/csv, application/json'];
        if ($dashboardSession !== null) {
            $headers['Cookie'] = 'cauri_session=' . $dashboardSession;
            $headers['Authorization'] = null; // the service refuses the export to any request carrying an API key
        }
        return $this->client->request('GET /v1/transactions/export', query: $query, headers: $headers, sink: $into)->body;
    }
}
