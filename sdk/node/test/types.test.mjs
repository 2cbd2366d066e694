// The public types (types/index.d.ts over the generated schema) compile, and
// hold what a merchant writes (test/types/usage.ts), with TypeScript pinned here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';

const run = promisify(execFile);
const dir = fileURLToPath(new URL('..', import.meta.url));

test('types compile with tsc --strict', { timeout: 120_000 }, async () => {
  try {
    await run('npx', ['--yes', '-p', 'typescript@5.9.3', 'tsc', '-p', 'test/types/tsconfig.json'], { cwd: dir, timeout: 110_000 });
  } catch (e) {
    assert.fail(`tsc: ${e.stdout}${e.stderr}`);
  }
});
