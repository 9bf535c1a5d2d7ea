// Opens the browser example (examples/browser) in headless Chromium with
// Playwright, waits for its run to finish, checks what the page shows and
// saves a screenshot. Run by interop/browser.sh:
//
//   node browser_page.mjs PAGE_URL SCREENSHOT_PATH
//
// Exits non-zero when a row shows something other than what spec_server
// answers.
import { chromium } from 'playwright-core';

const [pageUrl, screenshot] = process.argv.slice(2);
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
let failed = 0;
try {
  const page = await browser.newPage({ viewport: { width: 900, height: 720 } });
  page.on('console', m => console.log(`page: ${m.text()}`));
  page.on('pageerror', e => { console.log(`page error: ${e}`); failed++; });
  await page.goto(pageUrl);
  // The bar moves while the reports arrive: catch it half way.
  await page.waitForFunction(() => {
    const bar = document.getElementById('progress');
    return Number(bar.getAttribute('value')) > 0;
  }, null, { timeout: 30_000 });
  const midway = await page.textContent('#progress-label');
  await page.waitForFunction(() => document.getElementById('status').textContent === 'done',
    null, { timeout: 30_000 });
  const rows = {};
  for (const id of ['subtract', 'domain-error', 'progress-label', 'progress-result', 'batch', 'timeout']) {
    rows[id] = (await page.textContent(`#${id}`)).trim();
  }
  const expect = {
    'subtract': /^19(\.0)?$/,
    'domain-error': /^error -32602: /,
    'progress-label': /^step 20 of 20$/,
    'progress-result': /^\{"done":true,"steps":20\}$/,
    'batch': /^\[7(\.0)?, 7(\.0)?\]$/,
    'timeout': /no answer within the request timeout/,
  };
  for (const [id, pattern] of Object.entries(expect)) {
    const ok = pattern.test(rows[id]);
    console.log(`${ok ? 'ok  ' : 'FAIL'} #${id}: ${rows[id]}`);
    if (!ok) failed++;
  }
  console.log(`progress seen on the way: ${midway}`);
  await page.screenshot({ path: screenshot, fullPage: true });
  console.log(`screenshot: ${screenshot}`);
} finally {
  await browser.close();
}
process.exit(failed ? 1 : 0);
