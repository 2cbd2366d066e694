<?php

declare(strict_types=1);

namespace Cauri\Tests;

use Cauri\CauriException;
use Cauri\Client;
use Cauri\Tests\Support\Service;
use PHPUnit\Framework\TestCase;

/** 429 from the real service, on an instance of its own (its limit is per IP: it would disturb the other tests). */
final class RateLimitTest extends TestCase
{
    public function testSixtyFirstSessionOfTheMinuteIs429(): void
    {
        $svc = Service::start();
        try {
            $cauri = new Client($svc->keys['test_secret'], ['base_url' => $svc->baseUrl, 'max_retries' => 0, 'timeout' => 10]);
            $created = 0;
            $error = null;
            for ($i = 0; $i < 61; $i++) {
                try {
                    $cauri->sessions->create(['amount' => 100 + $i]);
                    $created++;
                } catch (CauriException $e) {
                    $error = $e;
                    break;
                }
            }
            $this->assertSame(60, $created, '60 sessions a minute per IP');
            $this->assertNotNull($error);
            $this->assertSame(429, $error->status);
            $this->assertSame('rate_limited', $error->errorCode);
            $this->assertGreaterThanOrEqual(1, $error->retryAfter);
            $this->assertLessThanOrEqual(60, $error->retryAfter);
            $this->assertNotNull($error->requestId);

            // With retries, a Retry-After beyond max_retry_wait is not waited for: the error comes at once.
            $patient = new Client($svc->keys['test_secret'], ['base_url' => $svc->baseUrl, 'max_retries' => 2, 'max_retry_wait' => 0, 'timeout' => 10]);
            $t = microtime(true);
            try {
                $patient->sessions->create(['amount' => 100], 'rate-limited-order');
                $this->fail('no error');
            } catch (CauriException $e) {
                $this->assertSame(429, $e->status);
            }
            $this->assertLessThan(2, microtime(true) - $t);
        } finally {
            $svc->stop();
        }
    }
}
