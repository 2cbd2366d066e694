<?php

declare(strict_types=1);

namespace Cauri\Tests;

use Cauri\CauriException;
use Cauri\Client;
use Cauri\Tests\Support\Process;
use Cauri\Tests\Support\Service;
use PHPUnit\Framework\TestCase;

/**
 * Production routes (links, transfers) on a verified workspace whose gateway
 * is `cauri simulate pawapay` on 127.0.0.1: the service's own simulator of
 * the aggregator, so no traffic leaves the machine.
 */
final class LiveTest extends TestCase
{
    private static Process $sim;
    private static Client $cauri;

    public static function setUpBeforeClass(): void
    {
        $svc = Service::shared();
        $port = Process::freePort();
        self::$sim = new Process([Service::binary(), 'simulate', 'pawapay', '--addr', "127.0.0.1:$port", '--settle-after', '1s'], [], $svc->dir . '/sim.log');
        self::$sim->waitPort($port);
        $ws = $svc->workspace(verified: true);
        $svc->cli(['gateway', 'add', '--workspace', $ws['id'], '--provider', 'pawapay', '--countries', 'SN', '--live', '--credentials', '-', '--api-url', "http://127.0.0.1:$port"], '{"api_token": "sim-token"}');
        self::$cauri = new Client($ws['keys']['live_secret'], ['base_url' => $svc->baseUrl, 'timeout' => 15]);
    }

    public static function tearDownAfterClass(): void
    {
        self::$sim->stop();
    }

    public function testPaymentLinks(): void
    {
        $links = self::$cauri->paymentLinks;
        $link = $links->create(['title' => 'Robe wax', 'amount' => '15000', 'max_payments' => 3, 'metadata' => ['sku' => 'robe-1']]);
        $this->assertStringStartsWith('pl_', $link->id);
        $this->assertSame('15000', $link->amount);
        $this->assertSame('XOF', $link->currency);
        $this->assertSame(3, $link->max_payments);
        $this->assertSame(['sku' => 'robe-1'], $link->metadata);
        $this->assertTrue($link->active);
        $this->assertSame($link->id, $links->retrieve($link->id)->id);

        $page = $links->list(['limit' => 1]);
        $this->assertSame(1, $page->count);
        $this->assertSame($link->id, $page->data[0]->id);

        $off = $links->update($link->id, ['active' => false]);
        $this->assertFalse($off->active);
        $expiry = gmdate('Y-m-d\TH:i:s\Z', time() + 86400);
        $on = $links->update($link->id, ['active' => true, 'expires_at' => $expiry]);
        $this->assertTrue($on->active);
        $this->assertNotNull($on->expires_at);

        $this->assertStringContainsString('<svg', $links->qr($link->id));
        $this->assertSame("\x89PNG", substr($links->qr($link->id, 'png'), 0, 4));

        $check = $links->check($link->id);
        $this->assertFalse($check->paid);
        $this->assertSame('WAITING', $check->status);

        try {
            $links->create(['title' => 'Bad', 'amount' => 100, 'max_payments' => 0]);
            $this->fail('no error');
        } catch (CauriException $e) {
            $this->assertSame(400, $e->status);
            $this->assertStringContainsString('max_payments', $e->errorMessage);
        }
    }

    public function testTransfers(): void
    {
        $transfers = self::$cauri->transfers;
        $options = $transfers->options();
        $this->assertSame('SN', $options->countries[0]['country']);
        $this->assertContains('XOF', $options->currencies);

        $recipient = $transfers->recipient(['country' => 'SN', 'operator' => 'orange_money', 'phone' => '77 123 45 67']);
        $this->assertSame('+221771234567', $recipient->phone);
        $this->assertFalse($recipient->name_available);

        $request = ['amount' => 1000, 'country' => 'SN', 'operator' => 'orange_money', 'phone' => '+221 77 123 45 67', 'description' => 'Remboursement'];
        // A generated key: two calls are two transfers.
        $a = $transfers->create($request);
        $b = $transfers->create($request);
        $this->assertStringStartsWith('tr_', $a->id);
        $this->assertNotSame($a->id, $b->id);
        $this->assertSame('1000', $a->amount);
        $this->assertSame('0', $a->fee);
        $this->assertContains($a->status, ['processing', 'succeeded']);
        $this->assertFalse($a->replayed());
        // The caller's key: the second call is a replay of the first.
        $key = 'payout-' . bin2hex(random_bytes(4));
        $first = $transfers->create($request, $key);
        $again = $transfers->create($request, $key);
        $this->assertSame($first->id, $again->id);
        $this->assertTrue($again->replayed());
        try {
            $transfers->create(['amount' => 2000] + $request, $key);
            $this->fail('a key reused with another transfer');
        } catch (CauriException $e) {
            $this->assertSame(422, $e->status);
            $this->assertSame('idempotency_key_reused', $e->errorCode);
        }
        $this->assertSame($first->id, $transfers->retrieve($first->id)->id);
        $list = $transfers->list(['limit' => 10]);
        $this->assertContains($first->id, array_map(fn ($t) => $t->id, $list->data));

        $batch = $transfers->batch([$request, ['amount' => 500] + $request, ['country' => 'SN']]);
        $this->assertSame(3, $batch->count);
        $this->assertSame(2, $batch->created);
        $this->assertSame(1, $batch->refused);
        $this->assertSame(201, $batch->data[0]->status);
        $this->assertSame('500', $batch->data[1]->transfer->amount);
        $this->assertSame(400, $batch->data[2]->status);
        $this->assertNotNull($batch->data[2]->code);

        try {
            $transfers->create(['amount' => 1000, 'country' => 'CI', 'operator' => 'orange_money', 'phone' => '+2250707123456']);
            $this->fail('no error');
        } catch (CauriException $e) {
            $this->assertSame(400, $e->status);
            $this->assertSame('pays_non_desservi', $e->errorCode);
        }
        try {
            $transfers->retrieve('tr_nope');
            $this->fail('no error');
        } catch (CauriException $e) {
            $this->assertSame(404, $e->status);
            $this->assertSame('transfert_introuvable', $e->errorCode);
        }
    }
}
