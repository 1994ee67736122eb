package livesync

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/pbkdf2"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"unicode/utf16"
)

// Errors a caller branches on. Decode and Read wrap them with context.
var (
	// ErrEncrypted means a document needs the E2EE passphrase and the
	// Decoder has none: the follower should refuse to start.
	ErrEncrypted = errors.New("vault is end-to-end encrypted: configure the passphrase")
	// ErrWrongPassphrase means AES-GCM rejected the ciphertext under every
	// key the passphrase gives.
	ErrWrongPassphrase = errors.New("cannot decrypt: wrong passphrase?")
	// ErrNoSalt means V2 ciphertext was met by a Decoder built without the
	// pbkdf2salt of _local/obsidian_livesync_sync_parameters.
	ErrNoSalt = errors.New("cannot decrypt: no pbkdf2 salt (read _local/obsidian_livesync_sync_parameters)")
	// ErrMalformed means a document or one of its fields cannot be parsed;
	// it concerns that document only.
	ErrMalformed = errors.New("malformed document")
)

// Key-derivation parameters of the writers (octagonal-wheels hkdf.ts,
// encryption.ts, encryptionv3.ts).
const (
	v2Iterations = 310_000
	v1Iterations = 100_000
	v3Iterations = 100_000
	v3SaltSuffix = "fancySyncForYou!"
	v2IVLen      = 12
	v2SaltLen    = 32
	gcmTagLen    = 16
	// maxV1Keys bounds the V1 key cache. V1 writers reuse a salt for about
	// 100 messages and derive one per obfuscated path, so a vault needs far
	// fewer; the bound only stops hostile input from growing it forever.
	maxV1Keys = 4096
)

type v1KeyID struct {
	salt       string
	iterations int
}

// keyring derives the AES keys for one passphrase and one pbkdf2 salt, each
// PBKDF2 key once (310 000 iterations for V2 is the expensive step).
type keyring struct {
	passphrase string
	salt       []byte

	mu     sync.Mutex
	master []byte
	v3     []byte
	v1     map[v1KeyID][]byte
}

// decrypt returns the plaintext of any LiveSync ciphertext: "%=" (V2, HKDF),
// "%~" (V3), "%" + hex (V1) or the legacy JSON array.
func (k *keyring) decrypt(s string) (string, error) {
	switch {
	case strings.HasPrefix(s, "%="):
		return k.decryptV2(s[2:])
	case strings.HasPrefix(s, "%~"):
		return k.decryptV3(s[2:])
	case strings.HasPrefix(s, "%"):
		return k.decryptV1(s[1:])
	case strings.HasPrefix(s, "["):
		return k.decryptLegacy(s)
	}
	return "", fmt.Errorf("%w: unknown ciphertext format", ErrMalformed)
}

// decryptV2: base64(IV 12 | HKDF salt 32 | ciphertext+tag), AES key =
// HKDF-SHA256(PBKDF2-SHA256(passphrase, pbkdf2salt, 310000), HKDF salt).
func (k *keyring) decryptV2(s string) (string, error) {
	b, err := decodeBase64(s)
	if err != nil {
		return "", fmt.Errorf("%w: v2 ciphertext: %w", ErrMalformed, err)
	}
	if len(b) < v2IVLen+v2SaltLen+gcmTagLen {
		return "", fmt.Errorf("%w: v2 ciphertext too short", ErrMalformed)
	}
	master, err := k.masterKey()
	if err != nil {
		return "", err
	}
	key, err := hkdf.Key(sha256.New, master, b[v2IVLen:v2IVLen+v2SaltLen], "", 32)
	if err != nil {
		return "", fmt.Errorf("hkdf: %w", err)
	}
	return openGCM(key, b[:v2IVLen], b[v2IVLen+v2SaltLen:])
}

// decryptV1: hex IV (16 bytes) | hex salt (16 bytes) | base64 ciphertext.
func (k *keyring) decryptV1(s string) (string, error) {
	if len(s) < 64 {
		return "", fmt.Errorf("%w: v1 ciphertext too short", ErrMalformed)
	}
	return k.openV1(s[64:], s[:32], s[32:64])
}

// decryptLegacy: ["base64 ciphertext","hex IV","hex salt"], whose plaintext
// is a JSON string.
func (k *keyring) decryptLegacy(s string) (string, error) {
	var parts []string
	if err := json.Unmarshal([]byte(s), &parts); err != nil || len(parts) != 3 {
		return "", fmt.Errorf("%w: legacy ciphertext is not a 3-string array", ErrMalformed)
	}
	plain, err := k.openV1(parts[0], parts[1], parts[2])
	if err != nil {
		return "", err
	}
	var out string
	if err := json.Unmarshal([]byte(plain), &out); err != nil {
		return "", fmt.Errorf("%w: legacy plaintext is not a JSON string", ErrMalformed)
	}
	return out, nil
}

// openV1 tries both iteration counts a V1 writer may have used (fixed, or
// "dynamic" from the passphrase length): GCM authentication tells which.
func (k *keyring) openV1(ciphertext, ivHex, saltHex string) (string, error) {
	iv, err1 := hex.DecodeString(ivHex)
	salt, err2 := hex.DecodeString(saltHex)
	ct, err3 := decodeBase64(ciphertext)
	if err := errors.Join(err1, err2, err3); err != nil || len(iv) == 0 || len(ct) < gcmTagLen {
		return "", fmt.Errorf("%w: v1 ciphertext", ErrMalformed)
	}
	for _, iterations := range []int{v1Iterations, dynamicIterations(k.passphrase)} {
		key, err := k.v1Key(salt, iterations)
		if err != nil {
			return "", err
		}
		plain, err := openGCM(key, iv, ct)
		if err == nil {
			return plain, nil
		}
	}
	return "", ErrWrongPassphrase
}

// decryptV3: hex IV (12 bytes) | base64 ciphertext, one key per passphrase.
func (k *keyring) decryptV3(s string) (string, error) {
	if len(s) < 24 {
		return "", fmt.Errorf("%w: v3 ciphertext too short", ErrMalformed)
	}
	iv, err1 := hex.DecodeString(s[:24])
	ct, err2 := decodeBase64(s[24:])
	if err := errors.Join(err1, err2); err != nil || len(ct) < gcmTagLen {
		return "", fmt.Errorf("%w: v3 ciphertext", ErrMalformed)
	}
	key, err := k.v3Key()
	if err != nil {
		return "", err
	}
	return openGCM(key, iv, ct)
}

func (k *keyring) masterKey() ([]byte, error) {
	if len(k.salt) == 0 {
		return nil, ErrNoSalt
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.master == nil {
		key, err := pbkdf2.Key(sha256.New, k.passphrase, k.salt, v2Iterations, 32)
		if err != nil {
			return nil, fmt.Errorf("pbkdf2: %w", err)
		}
		k.master = key
	}
	return k.master, nil
}

// v1Key derives PBKDF2-SHA256 over the raw SHA-256 digest of the passphrase.
func (k *keyring) v1Key(salt []byte, iterations int) ([]byte, error) {
	id := v1KeyID{salt: string(salt), iterations: iterations}
	k.mu.Lock()
	defer k.mu.Unlock()
	if key, ok := k.v1[id]; ok {
		return key, nil
	}
	digest := sha256.Sum256([]byte(k.passphrase))
	key, err := pbkdf2.Key(sha256.New, string(digest[:]), salt, iterations, 32)
	if err != nil {
		return nil, fmt.Errorf("pbkdf2: %w", err)
	}
	if k.v1 == nil || len(k.v1) >= maxV1Keys {
		k.v1 = map[v1KeyID][]byte{}
	}
	k.v1[id] = key
	return key, nil
}

func (k *keyring) v3Key() ([]byte, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.v3 == nil {
		digest := sha256.Sum256([]byte(k.passphrase + v3SaltSuffix))
		key, err := pbkdf2.Key(sha256.New, k.passphrase, digest[:16], v3Iterations, 32)
		if err != nil {
			return nil, fmt.Errorf("pbkdf2: %w", err)
		}
		k.v3 = key
	}
	return k.v3, nil
}

// dynamicIterations is the "useDynamicIterationCount" count of V1 writers;
// the length is in UTF-16 code units, as JavaScript counts it.
func dynamicIterations(passphrase string) int {
	short := 15 - len(utf16.Encode([]rune(passphrase)))
	return max(short, 0)*1000 + 121 - short
}

// openGCM decrypts AES-256-GCM with a 128-bit tag and the nonce length the
// format uses (12 bytes for V2/V3, 16 for V1).
func openGCM(key, nonce, ciphertext []byte) (string, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return "", fmt.Errorf("aes: %w", err)
	}
	aead, err := cipher.NewGCMWithNonceSize(block, len(nonce))
	if err != nil {
		return "", fmt.Errorf("%w: gcm nonce: %w", ErrMalformed, err)
	}
	plain, err := aead.Open(nil, nonce, ciphertext, nil)
	if err != nil {
		return "", ErrWrongPassphrase
	}
	return string(plain), nil
}
