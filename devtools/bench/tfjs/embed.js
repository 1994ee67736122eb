// The TF.js reference runtime of USE-lite, for the embedder benchmark: reads
// {"texts": [...], "runs": N, "warm": W, "model": DIR} on stdin, embeds the
// texts N times (after a warm-up call on the first W) with the model files
// in DIR and prints {"rates": [chunks/s, ...]}.
const { initModel } = require("@energetic-ai/embeddings");
const { loadGraphModel } = require("@energetic-ai/core");
const fs = require("fs");

(async () => {
  const req = JSON.parse(fs.readFileSync(0, "utf-8"));
  const model = await initModel(async () => ({
    model: await loadGraphModel(`file://${req.model}/model.json`),
    vocabulary: JSON.parse(fs.readFileSync(`${req.model}/vocab.json`, "utf-8")),
  }));
  await model.embed(req.texts.slice(0, req.warm));
  const rates = [];
  for (let i = 0; i < req.runs; i++) {
    const t = process.hrtime.bigint();
    await model.embed(req.texts);
    rates.push(req.texts.length / (Number(process.hrtime.bigint() - t) / 1e9));
  }
  process.stdout.write(JSON.stringify({ rates }) + "\n");
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
