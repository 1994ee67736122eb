// Headless Chromium (Debian's package) for the page tests, driven by
// playwright-core, in a fresh profile that is removed afterwards. Also the
// checks every page test makes: no script error or CSP violation, no
// dialog, no horizontal scroll, and screenshots in light and dark mode at
// a laptop's and a phone's size.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";

export const base = process.env.VAULTASK_URL;
const shots = process.env.SCREENSHOTS;

export const sizes = { desktop: { width: 1280, height: 800 }, phone: { width: 360, height: 740 } };

/** launch starts Chromium and returns its context, a page and what the page did wrong. */
export async function launch() {
  const profile = mkdtempSync(join(tmpdir(), "vaultask-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    headless: true,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    viewport: sizes.desktop,
    acceptDownloads: true,
    colorScheme: "light",
  });
  const page = context.pages()[0] || (await context.newPage());
  const problems = { errors: [], dialogs: [] };
  page.on("pageerror", (e) => problems.errors.push("page error: " + e.message));
  page.on("console", (m) => {
    if (m.type() === "error" && !/Failed to load resource: the server responded with a status of 4\d\d/.test(m.text())) problems.errors.push("console: " + m.text());
  });
  page.on("dialog", (d) => {
    problems.dialogs.push(d.message());
    d.dismiss();
  });
  const close = async () => {
    await context.close();
    rmSync(profile, { recursive: true, force: true });
  };
  return { context, page, problems, close };
}

/** run runs a test against a fresh browser; on failure it saves a
 * screenshot (failure-NAME.png) and prints what the page reported. */
export async function run(name, test) {
  const b = await launch();
  try {
    const result = await test(b);
    clean(b.problems);
    console.log(JSON.stringify({ ok: true, ...result }));
  } catch (e) {
    await b.page.screenshot({ path: join(shots, `failure-${name}.png`) }).catch((err) => console.error("no failure screenshot:", err.message));
    console.error("page problems:", JSON.stringify(b.problems));
    throw e;
  } finally {
    await b.close();
  }
}

/** clean fails on any script error, CSP violation or dialog the page had. */
export function clean(problems) {
  assert.deepEqual(problems.dialogs, [], "no dialog opened");
  assert.deepEqual(problems.errors, [], "no script error or CSP violation");
}

/** fitsWidth fails when the page scrolls sideways. */
export async function fitsWidth(page, what) {
  const [scroll, width] = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
  assert.ok(scroll <= width, `${what}: the page is ${scroll}px wide in a ${width}px window (horizontal scroll)`);
}

/** screenshots takes name-{desktop,phone}-{light,dark}.png; prepare runs after each resize. */
export async function screenshots(page, name, prepare = async () => {}) {
  const taken = [];
  for (const [size, viewport] of Object.entries(sizes)) {
    for (const colorScheme of ["light", "dark"]) {
      await page.setViewportSize(viewport);
      await page.emulateMedia({ colorScheme });
      await prepare(size);
      await fitsWidth(page, `${name} ${size} ${colorScheme}`);
      const file = join(shots, `${name}-${size}-${colorScheme}.png`);
      await page.screenshot({ path: file, animations: "disabled", caret: "hide" });
      taken.push(file);
    }
  }
  await page.setViewportSize(sizes.desktop);
  await page.emulateMedia({ colorScheme: "light" });
  return taken;
}

/** shot takes one screenshot as the page is now. */
export async function shot(page, name, opts = {}) {
  const file = join(shots, name + ".png");
  await page.screenshot({ path: file, animations: "disabled", caret: "hide", ...opts });
  return file;
}
