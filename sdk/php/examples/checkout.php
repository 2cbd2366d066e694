<?php
// A minimal shop checkout: GET /checkout.php?order=1042 creates a Cauri
// checkout session for the order and sends the customer to its hosted page.
// Fulfil the order in WebhookController (payment.completed), never on the
// return to success_url.
//
//   CAURI_SECRET_KEY=svc_test_sec_... php -S 127.0.0.1:8000 -t examples

declare(strict_types=1);

require __DIR__ . '/../autoload.php'; // with Composer: require __DIR__ . '/vendor/autoload.php';

$cauri = new \Cauri\Client((string) getenv('CAURI_SECRET_KEY'), [
    'base_url' => getenv('CAURI_BASE_URL') ?: 'http://localhost:8080',
]);

$order = preg_replace('/[^A-Za-z0-9_-]/', '', (string) ($_GET['order'] ?? '')) ?: 'demo';

try {
    $session = $cauri->sessions->create([
        'amount' => 15000, // XOF has no minor unit: 15 000 francs CFA
        'currency' => 'XOF',
        'description' => '2 pagnes wax',
        'metadata' => ['order_id' => $order],
        'success_url' => 'https://shop.example/thanks?order=' . $order,
    ], idempotencyKey: 'order-' . $order); // a reload or a retry gives the same session
} catch (\Cauri\CauriException $e) {
    error_log('cauri: ' . $e->getMessage()); // carries the request id to quote
    http_response_code(502);
    echo 'Payment is unavailable right now, please try again.';
    return;
}

// Save $session->id with the order here, then:
header('Location: ' . $session->url, true, 303);
