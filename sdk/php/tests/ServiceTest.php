<?php

declare(strict_types=1);

namespace Cauri\Tests;

use Cauri\CauriException;
use Cauri\Client;
use Cauri\Models\Session;
use Cauri\Tests\Support\Process;
use Cauri\Tests\Support\Service;
use Cauri\Webhook;
use PHPUnit\Framework\TestCase;

/** The library against the real service: a session paid through the sandbox, its webhook verified, errors, transfers, refunds. */
final class ServiceTest extends TestCase
{
    private static Service $svc;
    private static Process $receiver;
    private static string $receiverUrl;
    private static string $inbox;

    public static function setUpBeforeClass(): void
    {
        self::$svc = Service::shared();
        self::$inbox = Process::tempDir('cauri-php-inbox-');
        [self::$receiver, self::$receiverUrl] = Process::phpServer(self::$inbox, __DIR__ . '/fixtures/receiver.php', ['RECEIVER_DIR' => self::$inbox], self::$svc->dir);
    }

    public static function tearDownAfterClass(): void
    {
        self::$receiver->stop();
    }

    private static function client(string $key = 'test_secret', array $options = []): Client
    {
        return new Client(self::$svc->keys[$key] ?? $key, $options + ['base_url' => self::$svc->baseUrl, 'timeout' => 15]);
    }

    /**
     * Waits (at most $seconds) for a webhook about $sessionId with $event; its raw body and headers.
     *
     * @return array{body: string, headers: array<string, string>}
     */
    private static function awaitWebhook(string $sessionId, string $event, float $seconds = 20, array $skip = []): array
    {
        $deadline = microtime(true) + $seconds;
        do {
            foreach (glob(self::$inbox . '/*.json') as $f) {
                if (in_array($f, $skip, true)) {
                    continue;
                }
                $r = json_decode((string) file_get_contents($f), true);
                $body = base64_decode($r['body']);
                $e = json_decode($body, true);
                if (($e['data']['id'] ?? null) === $sessionId && ($e['event'] ?? null) === $event) {
                    return ['body' => $body, 'headers' => $r['headers'], 'file' => $f];
                }
            }
            usleep(100_000);
        } while (microtime(true) < $deadline);
        self::fail("no $event webhook for $sessionId within {$seconds}s");
    }

    public function testSessionPaidThroughTheSandboxAndItsWebhookVerified(): void
    {
        $cauri = self::client();
        $config = $cauri->webhookConfig->update(['webhookUrl' => self::$receiverUrl . '/hooks']);
        $this->assertSame(self::$receiverUrl . '/hooks', $config->testWebhookUrl);
        $this->assertContains('payment.completed', $config->events);
        $this->assertSame(self::$receiverUrl . '/hooks', $cauri->webhookConfig->retrieve()->testWebhookUrl);

        $order = 'php-' . bin2hex(random_bytes(4));
        $session = $cauri->sessions->create([
            'amount' => 15000,
            'currency' => 'XOF',
            'description' => '2 pagnes wax',
            'customer_email' => 'awa@example.com',
            'metadata' => ['order_id' => $order],
            'success_url' => 'https://shop.example/thanks',
        ], idempotencyKey: "order-$order");
        $this->assertInstanceOf(Session::class, $session);
        $this->assertStringStartsWith('cs_', $session->id);
        $this->assertSame('15000', $session->amount);
        $this->assertSame('PENDING', $session['status']);
        $this->assertFalse($session->livemode);
        $this->assertSame(201, $session->httpStatus());
        $this->assertNotNull($session->requestId());
        $again = $cauri->sessions->create(['amount' => 15000, 'currency' => 'XOF', 'description' => '2 pagnes wax', 'customer_email' => 'awa@example.com', 'metadata' => ['order_id' => $order], 'success_url' => 'https://shop.example/thanks'], "order-$order");
        $this->assertSame($session->id, $again->id);
        $this->assertTrue($again->replayed());

        $methods = $cauri->sessions->methods($session->id, 'CI');
        $this->assertSame($session->id, $methods->id);
        $this->assertNotEmpty($methods->methods);
        $this->assertSame('sandbox', $methods->methods[0]->provider);

        $settled = $cauri->sandbox->settle($session->id, 'succes');
        $this->assertSame('SUCCESS', $settled->status);

        $hook = self::awaitWebhook($session->id, 'payment.completed');
        $event = Webhook::verify($hook['body'], $hook['headers'], self::$svc->keys['test_secret']);
        $this->assertSame('payment.completed', $event['event']);
        $this->assertSame($order, $event['data']['order_id']);
        $this->assertSame('15000', $event['data']['amount']);
        try {
            Webhook::verify($hook['body'], $hook['headers'], self::$svc->keys['live_secret']);
            $this->fail('verified under the live key');
        } catch (\Cauri\WebhookException $e) {
            $this->assertSame('bad_signature', $e->reason);
        }

        $status = $cauri->sessions->status($session->id);
        $this->assertSame('SUCCESS', $status->status);
        $this->assertTrue($status->paid);
        $this->assertSame('sandbox', $status->provider);
        // A public key reads the status too, without the customer's details.
        $public = self::client('test_public')->sessions->retrieve($session->id);
        $this->assertTrue($public->paid);
        $this->assertNull($public->customer_email);

        $deliveries = $cauri->webhookDeliveries->list(['transaction_id' => $session->id, 'event' => 'payment.completed']);
        $this->assertSame(1, $deliveries->count);
        $delivery = $deliveries->data[0];
        $this->assertSame(Webhook::header($hook['headers'], 'X-Service-Delivery'), $delivery->id);
        $this->assertSame($delivery->id, $cauri->webhookDeliveries->retrieve($delivery->id)->id);
        $resent = $cauri->webhookDeliveries->resend($delivery->id);
        $this->assertSame('delivered', $resent->status);
        $this->assertGreaterThanOrEqual(2, $resent->attempts);
        $second = self::awaitWebhook($session->id, 'payment.completed', 10, [$hook['file']]);
        $this->assertSame($event['id'], Webhook::verify($second['body'], $second['headers'], self::$svc->keys['test_secret'])['id']);

        // A refund of the test payment succeeds at once; the generated key makes a replay of it impossible to double.
        $refund = $cauri->refunds->create(['transaction_id' => $session->id, 'amount' => 5000, 'reason' => 'one pagne back']);
        $this->assertSame('succeeded', $refund->status);
        $this->assertSame('5000', $refund->amount);
        $this->assertSame('sandbox', $refund->provider);
        $this->assertSame($refund->id, $cauri->refunds->retrieve($refund->id)->id);
        $key = 'refund-' . $order;
        $rest = $cauri->refunds->create(['transaction_id' => $session->id], $key);
        $this->assertSame('10000', $rest->amount);
        $replay = $cauri->refunds->create(['transaction_id' => $session->id], $key);
        $this->assertSame($rest->id, $replay->id);
        $this->assertTrue($replay->replayed());
        $this->assertSame(2, $cauri->refunds->list(['transaction_id' => $session->id])->count);
        $this->assertSame('REFUNDED', $cauri->sessions->status($session->id)->status);
        try {
            $cauri->refunds->create(['transaction_id' => $session->id, 'amount' => 1]);
            $this->fail('refunded twice');
        } catch (CauriException $e) {
            $this->assertSame(400, $e->status);
            $this->assertSame('not_refundable', $e->errorCode);
        }
    }

    public function testErrors(): void
    {
        try {
            self::client('svc_test_sec_wrongwrongwrongwrongwrongwrong')->sessions->create(['amount' => 100]);
            $this->fail('no error');
        } catch (CauriException $e) {
            $this->assertSame(401, $e->status);
            $this->assertSame('unauthorized', $e->errorCode);
            $this->assertSame('Invalid API Key', $e->errorMessage);
            $this->assertStringStartsWith('req_', (string) $e->requestId);
            $this->assertSame('{"code":"unauthorized","error":"Invalid API Key"}', trim((string) $e->rawBody));
        }
        try {
            self::client()->sessions->create(['currency' => 'XOF', 'description' => 'no amount']);
            $this->fail('no error');
        } catch (CauriException $e) {
            $this->assertSame(400, $e->status);
            $this->assertSame('invalid_request', $e->errorCode);
            $this->assertStringContainsString('amount', $e->errorMessage, 'the message names the field');
        }
        try {
            self::client()->sessions->status('cs_doesnotexist');
            $this->fail('no error');
        } catch (CauriException $e) {
            $this->assertSame(404, $e->status);
            $this->assertSame('not_found', $e->errorCode);
        }
        // The sandbox's {success: false, message} shape.
        try {
            self::client()->sandbox->settle('cs_doesnotexist');
            $this->fail('no error');
        } catch (CauriException $e) {
            $this->assertSame(404, $e->status);
            $this->assertStringContainsString('cs_doesnotexist', $e->errorMessage);
        }
        // The export is the dashboard's: an API key gets 401.
        try {
            self::client()->transactions->export(['format' => 'csv']);
            $this->fail('no error');
        } catch (CauriException $e) {
            $this->assertSame(401, $e->status);
            $this->assertStringContainsString('dashboard', $e->errorMessage);
        }
    }

    public function testTransfersWithATestWorkspace(): void
    {
        $cauri = self::client();
        $transfer = ['amount' => 1000, 'country' => 'CI', 'operator' => 'orange_money', 'phone' => '+225 07 07 12 34 56'];
        foreach ([
            fn () => $cauri->transfers->create($transfer),
            fn () => $cauri->transfers->create($transfer, 'payout-1'),
            fn () => $cauri->transfers->batch([$transfer, $transfer]),
            fn () => $cauri->transfers->recipient(['country' => 'CI', 'operator' => 'orange_money', 'phone' => '0707123456']),
            fn () => $cauri->transfers->list(['status' => 'succeeded', 'limit' => 10]),
            fn () => $cauri->transfers->options(),
        ] as $i => $call) {
            try {
                $call();
                $this->fail("call $i: no error");
            } catch (CauriException $e) {
                // A workspace not verified yet is in test mode: no money goes out.
                $this->assertSame(403, $e->status, "call $i");
                $this->assertContains($e->errorCode, ['identite_non_verifiee', 'test_mode'], "call $i");
            }
        }
        // The live key of the unverified workspace: identity first.
        try {
            self::client('live_secret')->transfers->create($transfer);
            $this->fail('no error');
        } catch (CauriException $e) {
            $this->assertSame(403, $e->status);
            $this->assertSame('identite_non_verifiee', $e->errorCode);
        }
        try {
            $cauri->transfers->retrieve('tr_nope');
            $this->fail('no error');
        } catch (CauriException $e) {
            $this->assertSame(403, $e->status);
        }
        try {
            $cauri->refunds->create(['transaction_id' => 'cs_nope']);
            $this->fail('no error');
        } catch (CauriException $e) {
            $this->assertSame(404, $e->status);
            $this->assertSame('transaction_not_found', $e->errorCode);
        }
    }

    public function testLinksAndRouting(): void
    {
        $cauri = self::client();
        foreach ([
            fn () => $cauri->paymentLinks->create(['title' => 'Pagne', 'amount' => 5000]),
            fn () => $cauri->paymentLinks->list(['limit' => 5]),
            fn () => $cauri->paymentLinks->retrieve('pl_nope'),
            fn () => $cauri->paymentLinks->update('pl_nope', ['active' => false]),
            fn () => $cauri->paymentLinks->qr('pl_nope', 'png'),
        ] as $i => $call) {
            try {
                $call();
                $this->fail("call $i: no error");
            } catch (CauriException $e) {
                $this->assertSame(403, $e->status, "call $i");
                $this->assertSame('test_mode', $e->errorCode, "call $i");
            }
        }
        try {
            $cauri->paymentLinks->check('pl_nope');
            $this->fail('no error');
        } catch (CauriException $e) {
            $this->assertSame(404, $e->status);
        }
        $decision = $cauri->routing->route(['country' => 'CI', 'amount' => 15000, 'availableProviders' => ['pawapay', 'cinetpay'], 'phone' => '+2250707123456']);
        $this->assertContains($decision->routing->provider, ['pawapay', 'cinetpay']);
        $this->assertSame('orange_money', $decision->detectedOperator);
        $overview = $cauri->routing->overview(['country' => 'SN']);
        $this->assertSame('XOF', $overview->currency);
        $this->assertNotEmpty($overview->rankedProviders);
    }

    /** The export, with a dashboard session (an API key alone is refused, tested in testErrors). */
    public function testExportWithTheDashboardSession(): void
    {
        $cauri = self::client();
        $order = 'exp-' . bin2hex(random_bytes(3));
        $session = $cauri->sessions->create(['amount' => 2500, 'currency' => 'XOF', 'metadata' => ['order_id' => $order]]);
        $cauri->sandbox->settle($session->id);
        $cookie = self::$svc->dashboardSession();

        $csv = $cauri->transactions->export(['status' => 'SUCCESS'], $cookie);
        $lines = preg_split('/\r?\n/', trim($csv));
        $this->assertStringStartsWith('ID,Order ID,Status,Amount,Currency', $lines[0]);
        $this->assertStringContainsString($session->id . ',' . $order . ',SUCCESS,2500,XOF', $csv);

        $into = fopen('php://temp', 'w+b');
        $this->assertSame('', $cauri->transactions->export(['format' => 'json', 'search' => $order], $cookie, $into));
        rewind($into);
        $json = json_decode((string) stream_get_contents($into), true);
        $this->assertSame(1, $json['count']);
        $this->assertSame($session->id, $json['data'][0]['id']);
    }

    /** Every route of the running service's document is called by the library or left out on purpose. */
    public function testRouteCoverage(): void
    {
        $doc = json_decode((string) file_get_contents(self::$svc->baseUrl . '/v1/openapi.json'), true, 512, JSON_THROW_ON_ERROR);
        $inDoc = [];
        foreach ($doc['paths'] as $path => $ops) {
            foreach ($ops as $method => $_) {
                if (in_array($method, ['get', 'post', 'put', 'patch', 'delete'], true)) {
                    $inDoc[] = strtoupper($method) . ' ' . $path;
                }
            }
        }
        $missing = [];
        foreach ($inDoc as $route) {
            if (in_array($route, Client::ROUTES, true)) {
                continue;
            }
            $path = explode(' ', $route, 2)[1];
            $left = false;
            foreach (array_keys(Client::NOT_COVERED) as $prefix) {
                if ($path === $prefix || (str_ends_with($prefix, '/') && str_starts_with($path, $prefix)) || str_starts_with($path, $prefix . '/')) {
                    $left = true;
                }
            }
            if (!$left) {
                $missing[] = $route;
            }
        }
        $this->assertSame([], $missing, 'routes of openapi.yaml neither in Client::ROUTES nor in Client::NOT_COVERED');
        $this->assertSame([], array_values(array_diff(Client::ROUTES, $inDoc)), 'Client::ROUTES holds routes the document does not');
        // Each route of the table is called by a resource.
        $src = '';
        foreach (glob(dirname(__DIR__) . '/src/Resources/*.php') as $f) {
            $src .= file_get_contents($f);
        }
        foreach (Client::ROUTES as $route) {
            $this->assertStringContainsString("'$route'", $src, "no resource calls $route");
        }
    }

    /** The hand-kept models hold every field of their schema in the running service's document. */
    public function testModelsMatchTheDocument(): void
    {
        $doc = json_decode((string) file_get_contents(self::$svc->baseUrl . '/v1/openapi.json'), true, 512, JSON_THROW_ON_ERROR);
        $count = 0;
        foreach (glob(dirname(__DIR__) . '/src/Models/*.php') as $f) {
            $class = 'Cauri\\Models\\' . basename($f, '.php');
            $schema = self::resolve($doc, $class::SCHEMA);
            $props = array_keys($schema['properties'] ?? []);
            $this->assertNotEmpty($props, $class);
            $this->assertEqualsCanonicalizing($props, $class::FIELDS, "$class::FIELDS against " . $class::SCHEMA);
            foreach ($schema['required'] ?? [] as $r) {
                $this->assertContains($r, $class::FIELDS, $class);
            }
            $count++;
        }
        $this->assertGreaterThanOrEqual(20, $count);
        // Every JSON response of a covered route is modelled (by a model whose schema is that response's).
        $modelled = [];
        foreach (glob(dirname(__DIR__) . '/src/Models/*.php') as $f) {
            $modelled[] = constant('Cauri\\Models\\' . basename($f, '.php') . '::SCHEMA');
        }
        foreach (Client::ROUTES as $route) {
            [$method, $path] = explode(' ', $route, 2);
            foreach ($doc['paths'][$path][strtolower($method)]['responses'] as $status => $resp) {
                $status = (string) $status;
                if ($status[0] !== '2' || !isset($resp['content']['application/json']['schema'])) {
                    continue;
                }
                $s = $resp['content']['application/json']['schema'];
                $refs = isset($s['$ref']) ? [$s['$ref']] : array_column($s['oneOf'] ?? [], '$ref');
                if ($refs === [] && $path !== '/v1/transactions/export') {
                    $refs = ['#/paths/' . str_replace('/', '~1', $path) . '/' . strtolower($method) . "/responses/$status/content/application~1json/schema"];
                }
                foreach ($refs as $ref) {
                    $this->assertContains($ref, $modelled, "$route $status is not modelled");
                }
            }
        }
    }

    private static function resolve(array $doc, string $pointer): array
    {
        $node = $doc;
        foreach (explode('/', substr($pointer, 2)) as $part) {
            $part = str_replace(['~1', '~0'], ['/', '~'], $part);
            self::assertArrayHasKey($part, $node, $pointer);
            $node = $node[$part];
        }
        if (isset($node['$ref'])) {
            return self::resolve($doc, $node['$ref']);
        }
        if (isset($node['oneOf'])) { // {oneOf: [{$ref}, {type: null}]}
            foreach ($node['oneOf'] as $o) {
                if (isset($o['$ref'])) {
                    return self::resolve($doc, $o['$ref']);
                }
            }
        }
        return $node;
    }
}
