<?php

declare(strict_types=1);

namespace Cauri\Tests;

use Cauri\CauriException;
use Cauri\Client;
use Cauri\NetworkException;
use Cauri\Tests\Support\Process;
use PHPUnit\Framework\TestCase;

/**
 * The library's own retry logic against a tiny fake server on 127.0.0.1
 * (everything about the API itself is tested against the real service).
 */
final class RetryTest extends TestCase
{
    private static Process $server;
    private static string $url;
    private static string $dir;

    public static function setUpBeforeClass(): void
    {
        self::$dir = Process::tempDir('cauri-php-fake-');
        [self::$server, self::$url] = Process::phpServer(self::$dir, __DIR__ . '/fixtures/fake.php', ['FAKE_DIR' => self::$dir], self::$dir);
    }

    public static function tearDownAfterClass(): void
    {
        self::$server->stop();
    }

    /** @param list<array{0: int, 1?: array<string, string>, 2?: string}> $plan */
    private function plan(array $plan): void
    {
        @unlink(self::$dir . '/log.jsonl');
        file_put_contents(self::$dir . '/plan.json', json_encode($plan));
    }

    /** @return list<array<string, mixed>> */
    private function requests(): array
    {
        $f = self::$dir . '/log.jsonl';
        return is_file($f) ? array_map(fn ($l) => json_decode($l, true), file($f, FILE_IGNORE_NEW_LINES)) : [];
    }

    private function client(array $options = []): Client
    {
        return new Client('svc_test_sec_fake', $options + ['base_url' => self::$url, 'retry_base_delay' => 0.01, 'timeout' => 5]);
    }

    private const TRANSFER = '{"id":"tr_1","object":"transfer","amount":100,"fee":0,"status":"processing"}';

    public function testTransferRetried503WithTheSameGeneratedKey(): void
    {
        $this->plan([[503, [], '{"error":"down"}'], [503, [], '{"error":"down"}'], [201, [], self::TRANSFER]]);
        $tr = $this->client()->transfers->create(['amount' => 100, 'country' => 'CI', 'operator' => 'orange_money', 'phone' => '+2250707123456']);
        $this->assertSame('tr_1', $tr->id);
        $this->assertSame('100', $tr->amount);
        $this->assertSame('0', $tr->fee);
        $this->assertSame('req_fake_2', $tr->requestId());
        $reqs = $this->requests();
        $this->assertCount(3, $reqs, 'two retries (max_retries 2)');
        $keys = array_unique(array_map(fn ($r) => $r['headers']['idempotency-key'] ?? null, $reqs));
        $this->assertCount(1, $keys, 'the same Idempotency-Key on every attempt');
        $this->assertMatchesRegularExpression('/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/', $keys[0]);
        $this->assertSame('{"amount":100,"country":"CI","operator":"orange_money","phone":"+2250707123456"}', $reqs[0]['body']);
        $this->assertSame('Bearer svc_test_sec_fake', $reqs[0]['headers']['authorization']);

        // A second call gets a key of its own; a caller's key is sent as given.
        $this->plan([[201, [], self::TRANSFER]]);
        $this->client()->transfers->create(['amount' => '100.50', 'country' => 'CI', 'operator' => 'orange_money', 'phone' => '1']);
        $this->assertNotSame($keys[0], $this->requests()[0]['headers']['idempotency-key']);
        $this->assertStringContainsString('"amount":100.50', $this->requests()[0]['body'], 'a decimal string is sent as a JSON number, as written');
        $this->plan([[201, [], self::TRANSFER]]);
        $this->client()->refunds->create(['transaction_id' => 'cs_1'], 'refund-cs_1');
        $this->assertSame('refund-cs_1', $this->requests()[0]['headers']['idempotency-key']);
    }

    public function testGivesUpAfterMaxRetries(): void
    {
        $this->plan([[502, [], '{"error":"bad gateway"}']]);
        try {
            $this->client(['max_retries' => 1])->refunds->list();
            $this->fail('no error');
        } catch (CauriException $e) {
            $this->assertSame(502, $e->status);
            $this->assertSame('internal', $e->errorCode);
            $this->assertSame('bad gateway', $e->errorMessage);
            $this->assertSame('req_fake_1', $e->requestId);
        }
        $this->assertCount(2, $this->requests());
    }

    public function testRetryAfterIsHonoured(): void
    {
        $this->plan([[429, ['Retry-After' => '1'], '{"error":"Too many requests"}'], [200, [], '{"object":"list","data":[],"count":0}']]);
        $list = $this->client()->webhookDeliveries->list(['limit' => 5]);
        $this->assertSame(0, $list->count);
        $reqs = $this->requests();
        $this->assertCount(2, $reqs);
        $waited = $reqs[1]['t'] - $reqs[0]['t'];
        $this->assertGreaterThanOrEqual(0.95, $waited, 'waited Retry-After');
        $this->assertLessThan(2.5, $waited);
        $this->assertSame('/v1/webhooks/deliveries?limit=5', $reqs[0]['uri']);
    }

    public function testRetryAfterBeyondTheMaximumIsNotWaited(): void
    {
        $this->plan([[429, ['Retry-After' => '30'], '{"error":"Too many requests"}']]);
        $t = microtime(true);
        try {
            $this->client(['max_retry_wait' => 5])->refunds->retrieve('re_1');
            $this->fail('no error');
        } catch (CauriException $e) {
            $this->assertSame(429, $e->status);
            $this->assertSame('rate_limited', $e->errorCode);
            $this->assertSame(30, $e->retryAfter);
        }
        $this->assertLessThan(2, microtime(true) - $t);
        $this->assertCount(1, $this->requests());
    }

    public function testPostWithoutKeyIsNotRetried(): void
    {
        $this->plan([[503, [], '{"error":"down"}'], [201, [], '{"id":"cs_1"}']]);
        try {
            $this->client()->sessions->create(['amount' => 15000]);
            $this->fail('no error');
        } catch (CauriException $e) {
            $this->assertSame(503, $e->status);
        }
        $this->assertCount(1, $this->requests());
        $this->assertArrayNotHasKey('idempotency-key', $this->requests()[0]['headers']);

        // The same with a key: retried, the key unchanged.
        $this->plan([[503, [], '{"error":"down"}'], [201, [], '{"id":"cs_1","amount":15000}']]);
        $s = $this->client()->sessions->create(['amount' => 15000], 'order-1042');
        $this->assertSame('15000', $s->amount);
        $this->assertSame(['order-1042', 'order-1042'], array_map(fn ($r) => $r['headers']['idempotency-key'], $this->requests()));

        // PATCH of the webhook configuration sets a state: retried.
        $this->plan([[500, [], '{"error":"x"}'], [200, [], '{"success":true}']]);
        $this->client()->webhookConfig->update(['webhookUrl' => '']);
        $this->assertCount(2, $this->requests());
        $this->assertSame('PATCH', $this->requests()[1]['method']);
    }

    public function test4xxIsNotRetried(): void
    {
        $this->plan([[400, [], '{"error":"amount is required"}']]);
        try {
            $this->client()->transfers->create(['country' => 'CI']);
            $this->fail('no error');
        } catch (CauriException $e) {
            $this->assertSame(400, $e->status);
        }
        $this->assertCount(1, $this->requests());
    }

    public function testNetworkFailure(): void
    {
        $port = Process::freePort(); // nothing listens there
        $c = new Client('svc_test_sec_fake', ['base_url' => "http://127.0.0.1:$port", 'retry_base_delay' => 0.01, 'timeout' => 2]);
        try {
            $c->refunds->create(['transaction_id' => 'cs_1']);
            $this->fail('no error');
        } catch (NetworkException $e) {
            $this->assertInstanceOf(CauriException::class, $e);
            $this->assertSame(0, $e->status);
            $this->assertSame('network_error', $e->errorCode);
        }
    }

    public function testTimeout(): void
    {
        $this->plan([[200, [], '{"object":"list","data":[],"count":0}', 1.0]]);
        $t = microtime(true);
        try {
            $this->client(['timeout' => 0.3, 'max_retries' => 0])->refunds->list();
            $this->fail('no error');
        } catch (NetworkException $e) {
            $this->assertSame(0, $e->status);
        }
        $this->assertLessThan(0.9, microtime(true) - $t);
        usleep(800_000); // the fake server answers one request at a time
    }

    public function testFloatsAreRefused(): void
    {
        $this->expectException(\InvalidArgumentException::class);
        $this->client()->sessions->create(['amount' => 15.5]);
    }
}
