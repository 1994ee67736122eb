package deploy

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fakeTool is a docker, ssh or curl that logs its arguments and, for ssh,
// what it was given on stdin, then succeeds. Each call is logged in one
// write: the tools of a pipeline (docker save | gzip | ssh) run at once.
const fakeTool = `#!/usr/bin/env bash
line="$(basename "$0")$(printf ' %q' "$@")"
case $(basename "$0") in
ssh) [ -t 0 ] || line+=$'\n'"  stdin: $(head -c 200 | tr '\n' '|')" ;;
docker) [ "$1" != save ] || printf 'IMAGE-BYTES' ;;
curl) printf '{"version":"v9"}' ;;
esac
printf '%s\n' "$line" >>"$FAKE_LOG"
`

// deploy runs deploy.sh with args, fake tools first on PATH, the settings
// and env files given; it returns the output and what the tools were asked.
func deploy(t *testing.T, settings, env string, args ...string) (out, calls string, err error) {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tool := range []string{"docker", "ssh", "curl", "scp"} {
		if err := os.WriteFile(filepath.Join(bin, tool), []byte(fakeTool), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	settingsFile := filepath.Join(dir, "deploy.env")
	if err := os.WriteFile(settingsFile, []byte(settings), 0o600); err != nil {
		t.Fatal(err)
	}
	envFile := filepath.Join(dir, "secrets.env")
	if env != "" {
		if err := os.WriteFile(envFile, []byte(env), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	log := filepath.Join(dir, "calls.log")
	cmd := exec.Command("bash", append([]string{"deploy.sh"}, args...)...)
	cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), "FAKE_LOG="+log,
		"DEPLOY_ENV="+settingsFile, "DEPLOY_ENV_FILE="+envFile, "DEPLOY_VERSION=v1.2.3")
	o, err := cmd.CombinedOutput()
	c, _ := os.ReadFile(log)
	return strings.ReplaceAll(string(o), dir, "$TMP"), strings.ReplaceAll(string(c), dir, "$TMP"), err
}

const settings = `DEPLOY_HOST=nas.lan
DEPLOY_USER=admin
DEPLOY_DIR="/volume1/docker/vault ask"
DEPLOY_PLATFORM=linux/arm64
DEPLOY_PORT=8181
DEPLOY_READY_TIMEOUT=10
DEPLOY_SSH_OPTS="-p 2222"
`

// --dry-run prints every command of every verb, with the settings in them
// and the key never shown, and runs none of them.
func TestDryRun(t *testing.T) {
	out, calls, err := deploy(t, settings, "VAULTASK_API__KEY=sekrit\n", "--dry-run", "all", "logs")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if calls != "" {
		t.Errorf("--dry-run ran commands:\n%s", calls)
	}
	root, _ := filepath.Abs("..")
	want := []string{
		"+ docker build --platform linux/arm64 --build-arg VERSION=v1.2.3 -t vaultask:v1.2.3 " + root,
		`+ docker save vaultask:v1.2.3 | gzip | ssh -p 2222 admin@nas.lan gunzip\ \|\ docker\ load`,
		`+ ssh -p 2222 admin@nas.lan mkdir\ -p\ /volume1/docker/vault\\\ ask`,
		`+ ssh -p 2222 admin@nas.lan umask\ 077\ \&\&\ cat\ \>\ /volume1/docker/vault\\\ ask/compose.yaml < ` + root + "/deploy/compose.yaml",
		`+ ssh -p 2222 admin@nas.lan umask\ 077\ \&\&\ cat\ \>\ /volume1/docker/vault\\\ ask/.env < $TMP/secrets.env`,
		`+ ssh -p 2222 admin@nas.lan cd\ /volume1/docker/vault\\\ ask\ \&\&\ VAULTASK_IMAGE=vaultask:v1.2.3\ VAULTASK_PORT=8181\ docker\ compose\ -p\ vaultask\ up\ -d\ --no-build\ --remove-orphans`,
		"+ until curl -fsS --max-time 5 http://nas.lan:8181/readyz; do sleep 2; done   # for up to 10s",
		`+ curl -fsS -H Authorization:\ Bearer\ \$VAULTASK_API__KEY http://nas.lan:8181/status`,
		`docker\ compose\ -p\ vaultask\ logs\ --tail=200\ --follow`,
	}
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("dry run lacks\n  %s\nin\n%s", w, out)
		}
	}
	if strings.Contains(out, "sekrit") {
		t.Errorf("the dry run shows the API key:\n%s", out)
	}
}

// Without --dry-run the same commands run: the image piped into ssh, the
// files sent on stdin, compose started on the host, /readyz then /status
// asked with the key.
func TestRun(t *testing.T) {
	out, calls, err := deploy(t, settings, "VAULTASK_API__KEY=sekrit\n", "ship", "up", "status")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, w := range []string{
		`ssh -p 2222 admin@nas.lan gunzip\ \|\ docker\ load`,
		"docker save vaultask:v1.2.3",
		`ssh -p 2222 admin@nas.lan umask\ 077\ \&\&\ cat\ \>\ /volume1/docker/vault\\\ ask/.env` + "\n  stdin: VAULTASK_API__KEY=sekrit|",
		"  stdin: # vaultask next to an existing CouchDB",
		`docker\ compose\ -p\ vaultask\ up\ -d`,
		"curl -fsS --max-time 5 http://nas.lan:8181/readyz",
		`curl -fsS -H Authorization:\ Bearer\ sekrit http://nas.lan:8181/status`,
	} {
		if !strings.Contains(calls, w) {
			t.Errorf("the run did not call\n  %s\nin\n%s", w, calls)
		}
	}
	if !strings.Contains(out, `{"version":"v9"}`) {
		t.Errorf("status did not print /status:\n%s", out)
	}
}

// Missing or wrong settings stop the script before it runs anything, naming
// what to fix.
func TestSettingsErrors(t *testing.T) {
	for _, tc := range []struct{ settings, args, want string }{
		{"DEPLOY_DIR=/srv/vaultask\n", "up", "set DEPLOY_HOST"},
		{"DEPLOY_HOST=nas\n", "up", "set DEPLOY_DIR"},
		{settings + "DEPLOY_READY_TIMEOUT=5m\n", "status", "DEPLOY_READY_TIMEOUT is seconds"},
		{settings, "deploy", "unknown verb or flag: deploy"},
		{settings, "", "deploy/deploy.sh [--dry-run] VERB"},
	} {
		var args []string
		if tc.args != "" {
			args = []string{tc.args}
		}
		out, calls, err := deploy(t, tc.settings, "", args...)
		if err == nil || !strings.Contains(out, tc.want) || calls != "" {
			t.Errorf("%q with %q: %v, calls %q\n%s\nwant %q", tc.args, tc.settings, err, calls, out, tc.want)
		}
	}
}
