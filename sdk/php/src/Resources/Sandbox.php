<?php

declare(strict_types=1);

namespace Cauri\Resources;

use Cauri\Models\SandboxResponse;

/** Settling test sessions, as the hosted page's simulate buttons do: $cauri->sandbox. */
final class Sandbox extends Resource
{
    public const SUCCESS = 'succes';
    public const FAILURE = 'echec';

    /**
     * POST /checkout/sandbox: a PENDING or FAILED test session becomes SUCCESS
     * ("succes") or FAILED ("echec") and its webhook is sent. Its errors have
     * the {success: false, message} shape; they are CauriException too.
     * Not retried (no Idempotency-Key on this route).
     */
    public function settle(string $sessionId, string $issue = self::SUCCESS): SandboxResponse
    {
        return self::model(SandboxResponse::class, $this->client->request('POST /checkout/sandbox', body: ['transactionId' => $sessionId, 'issue' => $issue]));
    }
}
