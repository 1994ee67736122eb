package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"runtime"
	"runtime/debug"
	"time"
)

// version is the build's version, stamped with -ldflags "-X main.version=…";
// buildVersion adds the commit to a build that was not stamped.
var version = "dev"

// buildVersion is version, or for an unstamped build "dev+" and the VCS
// revision Go recorded (with "-dirty" for uncommitted changes).
func buildVersion() string {
	if version != "dev" {
		return version
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return version
	}
	rev, dirty := "", false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return version
	}
	v := version + "+" + rev[:min(12, len(rev))]
	if dirty {
		v += "-dirty"
	}
	return v
}

func runVersion(_ context.Context, m *Main, args []string) error {
	fs, _ := m.newFlagSet("version", "version")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	fmt.Fprintf(m.Stdout, "vaultask %s (%s, %s/%s)\n", buildVersion(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return nil
}

// runHealthcheck asks the running server's /healthz, for a container's
// HEALTHCHECK (the image has no curl): exit 0 when it answers 200.
func runHealthcheck(ctx context.Context, m *Main, args []string) error {
	fs, cfgPath := m.newFlagSet("healthcheck", "healthcheck [--url URL]")
	target := fs.String("url", "", "the /healthz URL (default: from api.listen, on loopback)")
	timeout := fs.Duration("timeout", 5*time.Second, "how long to wait for the answer")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	u := *target
	if u == "" {
		cfg, err := m.loadConfig(*cfgPath)
		if err != nil {
			return err
		}
		host, port, err := net.SplitHostPort(cfg.API.Listen)
		if err != nil {
			return fmt.Errorf("api.listen %q: %w", cfg.API.Listen, err)
		}
		if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
			host = "127.0.0.1"
		}
		u = "http://" + net.JoinHostPort(host, port) + "/healthz"
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("healthcheck: %s answered %s", u, resp.Status)
	}
	fmt.Fprintf(m.Stdout, "ok: %s\n", u)
	return nil
}
