package bench

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/vaultask/vaultask/tstest/syncbuf"
)

// BuildBinary builds vaultask from the module at root into dir with
// scripts/build-release.sh, as `make build` and the releases do (-trimpath,
// -ldflags "-s -w", the version from git describe), and returns its path.
func BuildBinary(ctx context.Context, root, dir string) (string, error) {
	bin, err := filepath.Abs(filepath.Join(dir, "vaultask"))
	if err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, "bash", filepath.Join("scripts", "build-release.sh"), bin)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("scripts/build-release.sh: %w\n%s", err, out)
	}
	return bin, nil
}

// childEnv is the environment of a vaultask child: only what it needs, so
// the developer's own VAULTASK_ settings never leak into a figure.
func childEnv(extra ...string) []string {
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"),
		"VAULTASK_OVERRIDES_FILE=/nonexistent/overrides.json", "VAULTASK_LOG__LEVEL=warn"}
	return append(env, extra...)
}

// runResult is a finished vaultask command.
type runResult struct {
	Stdout, Stderr string
	Wall           time.Duration
	// PeakRSS is the child's peak resident set (VmHWM, polled every 5 ms
	// until its output closes).
	PeakRSS int64
	// FirstLine is when the child printed its first line; Interrupted is
	// set when runChildFor's budget ran out, and Signalled is when it sent
	// the SIGINT (the child's shutdown comes after).
	FirstLine   time.Duration
	Interrupted bool
	Signalled   time.Duration
}

// runChild runs bin with args in dir and returns its output, wall time and
// peak RSS.
func runChild(ctx context.Context, bin, dir string, env []string, args ...string) (runResult, error) {
	return runChildFor(ctx, 0, bin, dir, env, args...)
}

// runChildFor is runChild that interrupts the child (SIGINT, as a user
// would) once budget has passed since its first line of output, when
// budget is positive; FirstLine is when that line came.
func runChildFor(ctx context.Context, budget time.Duration, bin, dir string, env []string, args ...string) (runResult, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir, cmd.Env = dir, env
	var out syncbuf.Buffer
	var errb bytes.Buffer
	cmd.Stderr = &errb
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return runResult{}, err
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return runResult{}, err
	}
	var res runResult
	var interrupted atomic.Bool
	var signalled atomic.Int64
	read := make(chan struct{})
	go func() {
		defer close(read)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if res.FirstLine == 0 {
				res.FirstLine = time.Since(start)
				if budget > 0 {
					t := time.AfterFunc(budget, func() {
						signalled.Store(int64(time.Since(start)))
						interrupted.Store(true)
						_ = cmd.Process.Signal(os.Interrupt)
					})
					defer t.Stop()
				}
			}
			out.Write(append(sc.Bytes(), '\n'))
		}
	}()
	// The child's own peak, polled: getrusage's ru_maxrss of a child
	// counts this process's resident set at the fork too (Linux carries
	// the old address space's high-water mark over exec).
	var peak atomic.Int64
	polled := make(chan struct{})
	go func() {
		defer close(polled)
		for {
			hwm, err := procStatus(cmd.Process.Pid, "VmHWM")
			if err != nil {
				return // exited
			}
			peak.Store(max(peak.Load(), hwm))
			select {
			case <-read:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	<-read
	<-polled
	err = cmd.Wait()
	res.Interrupted, res.Signalled = interrupted.Load(), time.Duration(signalled.Load())
	res.Stdout, res.Stderr, res.Wall = out.String(), errb.String(), time.Since(start)
	res.PeakRSS = peak.Load()
	if err != nil && !res.Interrupted {
		return res, fmt.Errorf("vaultask %s: %w\n%s", strings.Join(args, " "), err, res.Stderr)
	}
	return res, nil
}

// procStatus reads a field of /proc/PID/status in bytes (VmRSS, VmHWM).
func procStatus(pid int, field string) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			f := strings.Fields(rest)
			kb, err := strconv.ParseInt(f[0], 10, 64)
			return kb * 1024, err
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", field, pid)
}

// server is a running `vaultask serve` child.
type server struct {
	URL     string
	cmd     *exec.Cmd
	stderr  *syncbuf.Buffer
	started time.Time
	// Ready is how long it took from exec to /readyz answering 200.
	Ready time.Duration
	done  chan error
	// index, when set, is a copy of an index made for this server alone,
	// removed once it stops.
	index string
}

var servingOn = regexp.MustCompile(`serving on (http://\S+)`)

// startServe starts `vaultask serve` and waits until /readyz says ready.
func startServe(ctx context.Context, bin, dir string, env []string) (*server, error) {
	cmd := exec.Command(bin, "serve")
	cmd.Dir, cmd.Env = dir, append(env, "VAULTASK_API__LISTEN=127.0.0.1:0")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	s := &server{cmd: cmd, stderr: &syncbuf.Buffer{}, done: make(chan error, 1)}
	cmd.Stderr = s.stderr
	s.started = time.Now()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := servingOn.FindStringSubmatch(sc.Text()); m != nil {
				urls <- m[1]
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	go func() { s.done <- cmd.Wait() }()
	select {
	case s.URL = <-urls:
	case err := <-s.done:
		return nil, fmt.Errorf("vaultask serve exited: %v\n%s", err, s.stderr)
	case <-time.After(2 * time.Minute):
		s.kill()
		return nil, fmt.Errorf("vaultask serve did not listen within 2m\n%s", s.stderr)
	}
	deadline := time.Now().Add(10 * time.Minute)
	for {
		if resp, err := http.Get(s.URL + "/readyz"); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				s.Ready = time.Since(s.started)
				return s, nil
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			s.kill()
			return nil, fmt.Errorf("vaultask serve not ready within 10m (%v)\n%s", ctx.Err(), s.stderr)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// RSS is the server's resident set now.
func (s *server) RSS() (int64, error) { return procStatus(s.cmd.Process.Pid, "VmRSS") }

// PeakRSS is the server's peak resident set since it started (VmHWM).
func (s *server) PeakRSS() (int64, error) { return procStatus(s.cmd.Process.Pid, "VmHWM") }

// stop interrupts the server, waits for it to exit and removes its index
// copy.
func (s *server) stop() error {
	if s.index != "" {
		defer removeIndex(s.index)
	}
	_ = s.cmd.Process.Signal(os.Interrupt)
	select {
	case err := <-s.done:
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			return err
		}
		if err != nil {
			return fmt.Errorf("vaultask serve: %w\n%s", err, s.stderr)
		}
		return nil
	case <-time.After(time.Minute):
		s.kill()
		return fmt.Errorf("vaultask serve did not stop within 1m of SIGINT\n%s", s.stderr)
	}
}

func (s *server) kill() {
	_ = s.cmd.Process.Kill()
	<-s.done
}

// removeIndex removes an index file and its WAL.
func removeIndex(path string) {
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		_ = os.Remove(p)
	}
}

// copyFile copies an index file (closed, so its WAL is folded in) to dst.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
