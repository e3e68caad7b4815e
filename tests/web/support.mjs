// What the browser tests share: Debian's Chromium as they launch it, waiting for a condition,
// and the login link of the newest mail to an address in the server's file mailbox.
import fs from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';

/// Headless Chromium (Debian's, or $CHROMIUM), with nothing reaching outside the machine.
export function launchChromium() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
      '--disable-component-update', '--no-first-run'],
  });
}

/// `fn()`'s first truthy answer, polled every 100 ms; fails naming `what` after `ms` (a
/// function is asked then, so the failure can say what was seen instead).
export async function waitFor(fn, what, ms = 45000) {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${typeof what === 'function' ? what() : what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/// The login link of the newest mail to `email` in `mailbox` (quoted-printable decoded).
export function loginLink(mailbox, email) {
  const files = fs.existsSync(mailbox) ? fs.readdirSync(mailbox).filter((f) => f.endsWith('.eml')).sort() : [];
  for (const f of files.reverse()) {
    const raw = fs.readFileSync(path.join(mailbox, f), 'utf8');
    if (!raw.includes(email)) continue;
    const body = raw.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_, x) => String.fromCharCode(parseInt(x, 16)));
    const m = body.match(/https?:\/\/[^\s"<>]+\/auth\/magic\?[^\s"<>]+/);
    if (m) return m[0];
  }
  return null;
}
