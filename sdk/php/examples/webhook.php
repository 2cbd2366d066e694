<?php
// The front script of WebhookController for `php -S` (what Laravel's router
// does): POST /webhook.php. Paid orders are written to $ORDERS_DIR.

declare(strict_types=1);

require __DIR__ . '/../autoload.php'; // with Composer: require __DIR__ . '/vendor/autoload.php';
require __DIR__ . '/WebhookController.php';

$headers = []; // the shape of Laravel's $request->headers->all(): lowercase names, lists of values
foreach (getallheaders() as $name => $value) {
    $headers[strtolower($name)][] = $value;
}

$controller = new WebhookController((string) getenv('CAURI_SECRET_KEY'), function (string $orderId, array $session): void {
    $dir = getenv('ORDERS_DIR') ?: sys_get_temp_dir();
    file_put_contents($dir . '/' . basename($orderId) . '.paid', json_encode(['session' => $session['id'], 'amount' => $session['amount']]));
});

[$status, $body] = $controller->handle((string) file_get_contents('php://input'), $headers);
http_response_code($status);
echo $body;
