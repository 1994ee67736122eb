// /admin in headless Chromium. Run by cmd/vaultask/pages_test.go with
// VAULTASK_URL, VAULTASK_ADMIN_KEY and SCREENSHOTS; the Go test then checks
// the overrides file the page saved. Fails on its first broken assertion;
// prints one JSON line for the Go test.
import assert from "node:assert/strict";
import { base, run, screenshots, shot } from "./browser.mjs";

const adminKey = process.env.VAULTASK_ADMIN_KEY;
await run("admin", async ({ page }) => {
  const unlockWith = async (key) => {
    await page.getByLabel("Admin key").fill(key);
    await page.getByRole("button", { name: "Unlock" }).click();
  };
  const unlockError = page.locator("#unlock-error");

  // The page is served to anyone, its data only for the admin key.
  await page.goto(base + "/admin");
  await unlockWith("not-the-admin-key");
  await unlockError.filter({ hasText: "wrong admin key (9 more tries" }).waitFor();
  assert.equal(await page.locator("#console").isVisible(), false);
  await unlockWith(adminKey);
  await page.getByRole("heading", { name: "Feed and index" }).waitFor();

  // Status and the notes that are not indexed, with why.
  await page.locator("#status").getByText("live", { exact: true }).waitFor();
  await page.locator('#status dt:text-is("personal") + dd').filter({ hasText: /^1$/ }).waitFor();
  await page.locator('#status dt:text-is("embedded since start") + dd').waitFor();
  assert.match(await page.locator('#status dt:text-is("state") + dd').nth(1).textContent(), /^(idle|embedding)$/);
  await page.locator("#notes-panel").getByText("Drafts/Half.md").waitFor();
  assert.match(await page.locator("#notes-panel .reason").first().textContent(), /missing chunks/);
  await page.getByRole("tab", { name: /Skipped/ }).click();
  await page.locator("#notes-panel").getByText("No skipped notes.").waitFor();
  await page.getByRole("tab", { name: /Incomplete/ }).click();

  // The editable settings: a type-ahead for the model, providers without their key disabled.
  const model = page.getByLabel("Generation model");
  assert.equal(await model.inputValue(), "ollama/fake");
  assert.ok((await page.locator("#generation-models option").count()) >= 5, "a shortlist of models");
  const tavily = page.locator('#f-web-provider option[value="tavily"]');
  assert.equal(await tavily.isDisabled(), true, "tavily is disabled without its key");
  assert.match(await tavily.textContent(), /VAULTASK_TAVILY_API_KEY/);
  for (const topology of ["vault.url", "index.path", "api.listen", "models.embedding", "api.admin_key"]) {
    assert.equal(await page.locator(`[data-path="${topology}"]`).count(), 0, `${topology} is not offered`);
  }

  // Bad input: an error naming the field, and what was typed stays.
  const finalTopK = page.getByLabel("Chunks in the answer's context");
  assert.equal(await finalTopK.inputValue(), "8");
  await finalTopK.fill("0");
  await page.getByRole("button", { name: "Save" }).click();
  const fieldError = page.locator('[data-path="retrieval.final_top_k"] .field-error');
  await fieldError.filter({ hasText: "retrieval.final_top_k (0) must be >= 1" }).waitFor();
  assert.equal(await finalTopK.inputValue(), "0", "the typed value stays after an error");
  assert.equal(await finalTopK.getAttribute("aria-invalid"), "true");
  await finalTopK.fill("six");
  await page.getByRole("button", { name: "Save" }).click();
  await fieldError.filter({ hasText: 'retrieval.final_top_k="six": want an integer' }).waitFor();
  assert.equal(await finalTopK.inputValue(), "six");

  // A good change is saved, and the page says it applies on restart.
  await finalTopK.fill("6");
  await page.getByRole("button", { name: "Save" }).click();
  await page.getByText("Saved 1 change. They apply when vaultask restarts.").waitFor();
  const banner = page.locator("#restart-banner");
  await banner.filter({ hasText: "Saved changes are waiting for a restart" }).waitFor();
  assert.match(await banner.textContent(), /retrieval\.final_top_k: 8 → 6/);
  await page.reload();
  await banner.filter({ hasText: "Saved changes are waiting for a restart" }).waitFor();
  assert.equal(await page.getByLabel("Chunks in the answer's context").inputValue(), "6");
  await page.locator('[data-path="retrieval.final_top_k"]').getByText("running now: 8").waitFor();

  const taken = await screenshots(page, "admin");
  taken.push(await shot(page, "admin-desktop-light-full", { fullPage: true }));
  await page.setViewportSize({ width: 360, height: 740 });
  await page.getByRole("heading", { name: "Settings" }).scrollIntoViewIfNeeded();
  taken.push(await shot(page, "admin-phone-settings-light"));
  await page.setViewportSize({ width: 1280, height: 800 });

  // Ten wrong keys lock this address out, the right key included.
  await page.getByRole("button", { name: "Lock" }).click();
  for (let i = 1; i <= 10; i++) {
    await unlockWith("guess-" + i);
    await unlockError.filter({ hasText: `wrong admin key (${10 - i} more tries` }).waitFor();
  }
  await unlockWith(adminKey);
  await unlockError.filter({ hasText: "10 wrong admin keys from this address: try again in 10 minutes" }).waitFor();
  assert.equal(await page.locator("#console").isVisible(), false);
  taken.push(await shot(page, "admin-locked-out-desktop-light"));

  return { screenshots: taken };
});
