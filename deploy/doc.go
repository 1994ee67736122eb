// Package deploy holds the deployment files: the compose file, the env
// example, the ssh deploy script and the systemd unit. Its test runs the
// script against fake docker, ssh and curl commands.
package deploy
