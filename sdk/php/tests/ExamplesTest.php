<?php

declare(strict_types=1);

namespace Cauri\Tests;

use Cauri\Client;
use Cauri\Tests\Support\Process;
use Cauri\Tests\Support\Service;
use PHPUnit\Framework\TestCase;

/** The examples a merchant copies, run under php -S against the real service. */
final class ExamplesTest extends TestCase
{
    public function testCheckoutThenWebhookFulfilsTheOrder(): void
    {
        $svc = Service::shared();
        $orders = Process::tempDir('cauri-php-orders-');
        [$shop, $url] = Process::phpServer(dirname(__DIR__) . '/examples', null, [
            'CAURI_SECRET_KEY' => $svc->keys['test_secret'],
            'CAURI_BASE_URL' => $svc->baseUrl,
            'ORDERS_DIR' => $orders,
        ], $orders);
        try {
            $cauri = new Client($svc->keys['test_secret'], ['base_url' => $svc->baseUrl]);
            $cauri->webhookConfig->update(['webhookUrl' => "$url/webhook.php"]);

            // The customer clicks "Pay": a redirect to the hosted page.
            $order = 'ex' . bin2hex(random_bytes(4));
            [$status, $headers] = self::get("$url/checkout.php?order=$order");
            $this->assertSame(303, $status);
            $location = $headers['location'] ?? '';
            $this->assertStringStartsWith($svc->baseUrl . '/pay/cs_', $location);
            $id = basename(parse_url($location, PHP_URL_PATH));
            $this->assertSame('PENDING', $cauri->sessions->status($id)->status);
            [$status2, $headers2] = self::get("$url/checkout.php?order=$order");
            $this->assertSame($location, $headers2['location'] ?? '', 'a reload gives the same session');

            // The customer pays (the sandbox's "simulate success"); the webhook fulfils the order.
            $cauri->sandbox->settle($id);
            $paid = "$orders/$order.paid";
            $deadline = microtime(true) + 20;
            while (!is_file($paid) && microtime(true) < $deadline) {
                usleep(100_000);
            }
            $this->assertFileExists($paid, 'the webhook endpoint fulfilled the order');
            $this->assertSame(['session' => $id, 'amount' => '15000'], json_decode((string) file_get_contents($paid), true));

            // A forged request is refused.
            $ctx = stream_context_create(['http' => ['method' => 'POST', 'ignore_errors' => true, 'timeout' => 5,
                'header' => "Content-Type: application/json\r\nX-Service-Signature: t=" . time() . ',v1=' . str_repeat('ab', 32),
                'content' => '{"event":"payment.completed","data":{"order_id":"forged"}}']]);
            $body = file_get_contents("$url/webhook.php", false, $ctx);
            $this->assertStringContainsString(' 400', $http_response_header[0]);
            $this->assertSame('bad_signature', $body);
            $this->assertFileDoesNotExist("$orders/forged.paid");
        } finally {
            $shop->stop();
        }
    }

    /** @return array{int, array<string, string>} */
    private static function get(string $url): array
    {
        $ctx = stream_context_create(['http' => ['follow_location' => 0, 'ignore_errors' => true, 'timeout' => 10]]);
        file_get_contents($url, false, $ctx);
        $status = (int) explode(' ', $http_response_header[0])[1];
        $headers = [];
        foreach (array_slice($http_response_header, 1) as $line) {
            [$k, $v] = array_map('trim', explode(':', $line, 2)) + [1 => ''];
            $headers[strtolower($k)] = $v;
        }
        return [$status, $headers];
    }
}
