// Writes vectors.json: documents in the shapes that older or optional
// LiveSync writers produce and that the real fixtures lack (V1 and legacy
// ciphertext, encrypted eden, compression, the 0.20.x binary encoding), made
// with WebCrypto and zlib as the plugin's own code (octagonal-wheels
// encryption.ts / hkdf.ts / encodedUTF16.ts, commonlib compress.ts and
// encryption.ts) makes them. Ciphertexts use random IVs, so every run gives
// different bytes that decode to the same plaintext.
//
//   node testdata/vectors.mjs > testdata/vectors.json
import { deflateRawSync } from "node:zlib";

const subtle = globalThis.crypto.subtle;
const enc = new TextEncoder();
const passphrase = "correct horse battery staple";
// pbkdf2salt of vaultenc.local_sync_parameters.json.
const pbkdf2Salt = Buffer.from("q2DU58QYRO7ZB08SAIOc+sL4GSRiTwOdMUNCCnHJb58=", "base64");
const hex = (b) => Buffer.from(b).toString("hex");
const b64 = (b) => Buffer.from(b).toString("base64");
const rand = (n) => globalThis.crypto.getRandomValues(new Uint8Array(n));
const MARK = "\u000eLZ\u001d";

function iterations(dynamic) {
  const short = 15 - passphrase.length;
  return dynamic ? (short > 0 ? short : 0) * 1000 + 121 - short : 100000;
}

async function v1Key(salt, dynamic) {
  const digest = await subtle.digest("SHA-256", enc.encode(passphrase));
  const material = await subtle.importKey("raw", digest, { name: "PBKDF2" }, false, ["deriveKey"]);
  return subtle.deriveKey({ name: "PBKDF2", salt, iterations: iterations(dynamic), hash: "SHA-256" },
    material, { name: "AES-GCM", length: 256 }, false, ["encrypt"]);
}

// encryption.ts encrypt: "%" + hex IV(16) + hex salt(16) + base64.
async function encryptV1(input, dynamic = false) {
  const salt = rand(16), iv = rand(16);
  const ct = await subtle.encrypt({ name: "AES-GCM", iv }, await v1Key(salt, dynamic), enc.encode(input));
  return `%${hex(iv)}${hex(salt)}${b64(ct)}`;
}

// encryption.ts encryptV1: ["base64", "hex IV", "hex salt"] over JSON.stringify(input).
async function encryptLegacy(input) {
  const salt = rand(16), iv = rand(16);
  const ct = await subtle.encrypt({ name: "AES-GCM", iv }, await v1Key(salt, false), enc.encode(JSON.stringify(input)));
  return `["${b64(ct)}","${hex(iv)}","${hex(salt)}"]`;
}

// encryption.ts obfuscatePath: salt and IV from SHA-256(path + passphrase).
async function obfuscatePath(path) {
  const data = enc.encode(path);
  const digest = new Uint8Array(await subtle.digest("SHA-256", new Uint8Array([...data, ...enc.encode(passphrase)])));
  const salt = digest.slice(0, 16), iv = digest.slice(16, 32);
  const ct = await subtle.encrypt({ name: "AES-GCM", iv }, await v1Key(salt, false), data);
  return `%${hex(iv)}${hex(salt)}${b64(ct)}`;
}

// hkdf.ts encrypt: "%=" + base64(IV 12 | HKDF salt 32 | ciphertext).
const master = await (async () => {
  const material = await subtle.importKey("raw", enc.encode(passphrase), { name: "PBKDF2" }, false, ["deriveBits"]);
  const bits = await subtle.deriveBits({ name: "PBKDF2", salt: pbkdf2Salt, iterations: 310000, hash: "SHA-256" }, material, 256);
  return subtle.importKey("raw", bits, { name: "HKDF" }, false, ["deriveKey"]);
})();
async function encryptV2(input) {
  const hkdfSalt = rand(32), iv = rand(12);
  const key = await subtle.deriveKey({ name: "HKDF", salt: hkdfSalt, info: new Uint8Array(), hash: "SHA-256" },
    master, { name: "AES-GCM", length: 256 }, false, ["encrypt"]);
  const ct = new Uint8Array(await subtle.encrypt({ name: "AES-GCM", iv }, key, enc.encode(input)));
  return "%=" + b64(new Uint8Array([...iv, ...hkdfSalt, ...ct]));
}

// encodedUTF16.ts encodeBinaryEach.
function encodeUTF16Binary(bytes) {
  return String.fromCharCode(...[...bytes].map((c) => (c >= 0x26 && c <= 0x7e && c != 0x3a ? c : 0xc0 + c)));
}

const png = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgAAACAAFUok9dAAAAAElFTkSuQmCC", "base64");
const secret = "Secret diary entry.\n";
const edenText = "Written on the train, not yet a leaf.\n";
const compressible = "compressible ".repeat(40) + "\n";
const sha = async (s) => hex(await subtle.digest("SHA-256", enc.encode(s)));
const lowers = ["ΟΔΥΣΣΕΥΣ", "Notes/ΚΟΣΜΟΣ notes.md", "ΟΔΥΣΣΕΥΣ.md", "ΑΣ.md", "Σ.md", "İstanbul Notları.md", "_Private/ΚΑΛΗΜΕΡΑ ΚΟΣΜΟΣ'Σ.md", "Ǆemal ǅ.md"];

const out = {
  passphrase,
  v1: { cipher: await encryptV1(secret), plain: secret },
  v1Dynamic: { cipher: await encryptV1(secret, true), plain: secret },
  legacy: { cipher: await encryptLegacy(secret), plain: secret },
  // A 0.18–0.24 note: V1 path, plaintext children, eden wrapped even when
  // empty, V1 chunks without e_ (before 0.23.21).
  v1Vault: [
    { _id: "f:" + (await sha((await sha(passphrase)) + ":journal/2024-05-01.md")), _rev: "3-a", type: "plain",
      path: await obfuscatePath("Journal/2024-05-01.md"), children: ["h:+v1a", "h:+v1eden"],
      eden: { "h:++encrypted": { data: await encryptV1(JSON.stringify({ "h:+v1eden": { data: edenText, epoch: 3 } })), epoch: 999999 } },
      ctime: 1714521600000, mtime: 1714525200000, size: enc.encode(secret + edenText).length },
    { _id: "f:" + (await sha((await sha(passphrase)) + ":journal/2024-05-02.md")), _rev: "1-b", type: "plain",
      path: await encryptLegacy("Journal/2024-05-02.md"), children: ["h:+v1a"],
      eden: { "h:++encrypted": { data: await encryptV1(JSON.stringify({})), epoch: 999999 } },
      ctime: 1714608000000, mtime: 1714608000000, size: enc.encode(secret).length },
    { _id: "h:+v1a", _rev: "1-c", type: "leaf", data: await encryptV1(secret) },
  ],
  // E2EE V2 without path obfuscation: plain metadata, encrypted eden and a
  // chunk compressed before it was encrypted.
  v2Eden: [
    { _id: "meeting.md", _rev: "2-d", type: "plain", path: "Meeting.md", children: ["h:+v2z", "h:+v2eden"],
      eden: { "h:++encrypted-hkdf": { data: await encryptV2(JSON.stringify({ "h:+v2eden": { data: edenText, epoch: 2 } })), epoch: 999999 } },
      ctime: 1716000000000, mtime: 1716000300000, size: enc.encode(compressible + edenText).length },
    { _id: "h:+v2z", _rev: "1-e", type: "leaf", e_: true, data: await encryptV2(MARK + b64(deflateRawSync(enc.encode(compressible)))) },
  ],
  compressedBinary: { data: MARK + "~" + b64(deflateRawSync(png)), plain: b64(png) },
  compressedLatin1: { data: MARK + "%" + String.fromCharCode(...deflateRawSync(enc.encode(compressible))), plain: compressible },
  utf16Binary: { pieces: ["%" + encodeUTF16Binary(png.subarray(0, 30)), encodeUTF16Binary(png.subarray(30))], plain: b64(png) },
  lower: Object.fromEntries(lowers.map((s) => [s, s.toLowerCase()])),
};
process.stdout.write(JSON.stringify(out, null, 1) + "\n");
