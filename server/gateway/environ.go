package gateway

import (
	"slices"
	"sort"
	"strconv"
	"strings"
)

// inheritedEnv lists the variables a stdio upstream inherits from
// toolscout's environment: what finds and runs a program (npx, node, uvx,
// python), its temp and cache dirs, the locale, and how to reach the
// network through a proxy. Nothing else passes, so secrets such as
// TOOLSCOUT_AUTH_TOKEN or a cloud key in the shell stay with toolscout; a
// server that needs a variable gets it from its config's "env".
var inheritedEnv = []string{
	// Finding and running programs; who and where the user is.
	"PATH", "HOME", "USER", "LOGNAME", "SHELL", "TMPDIR", "TZ",
	"XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR",
	// Locale (LC_* as well, see inherits).
	"LANG", "LANGUAGE",
	// Proxies and the certificates a proxy or a private registry needs.
	"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY",
	"SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS",
	// npm and npx: where to cache and fetch packages, never its auth.
	"npm_config_cache", "npm_config_registry", "npm_config_userconfig", "npm_config_globalconfig",
	"npm_config_prefix", "npm_config_cafile", "npm_config_strict_ssl",
	"npm_config_proxy", "npm_config_https_proxy", "npm_config_noproxy",
	// Windows: what programs, node among them, need to start at all.
	"SYSTEMROOT", "SYSTEMDRIVE", "WINDIR", "COMSPEC", "PATHEXT", "TEMP", "TMP",
	"USERPROFILE", "USERNAME", "HOMEDRIVE", "HOMEPATH", "APPDATA", "LOCALAPPDATA",
	"PROGRAMDATA", "PROGRAMFILES", "PROGRAMFILES(X86)", "COMMONPROGRAMFILES",
}

// inherits reports whether an upstream inherits the variable name. Names
// compare without regard to case, as Windows and npm compare them (and so
// lower-case http_proxy passes too).
func inherits(name string) bool {
	if len(name) > 3 && strings.EqualFold(name[:3], "LC_") {
		return true
	}
	return slices.ContainsFunc(inheritedEnv, func(v string) bool { return strings.EqualFold(v, name) })
}

// upstreamEnv is the environment of a stdio upstream: the variables of
// environ (KEY=value entries) that it inherits, overridden and extended by
// env, its config's "env". The result is sorted, one entry per name.
func upstreamEnv(environ []string, env map[string]string) []string {
	out := make([]string, 0, len(env)+16)
	for _, kv := range environ {
		k, _, ok := strings.Cut(kv, "=")
		if !ok || k == "" || !inherits(k) {
			continue
		}
		if _, set := env[k]; set {
			continue
		}
		out = append(out, kv)
	}
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// DepthEnv names the variable that toolscout sets on every stdio upstream
// it starts: how many toolscout gateways started it, directly or through
// wrappers (1 for an upstream of a toolscout that no toolscout started).
// Wrappers such as env, sh -c, npx and scripts pass it on, so a toolscout
// started under a toolscout knows it, whatever its command line says.
const DepthEnv = "TOOLSCOUT_DEPTH"

// Depth returns the depth that environ (KEY=value entries) records in
// DepthEnv: 0 when it is unset or not a number.
func Depth(environ []string) int {
	d := 0
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok && k == DepthEnv {
			if n, err := strconv.Atoi(v); err == nil && n > 0 {
				d = n
			} else {
				d = 0
			}
		}
	}
	return d
}

// childEnv is the environment of a stdio upstream: upstreamEnv, with
// DepthEnv one more than environ's, whatever the config's env says (a
// config cannot hide that its server runs under toolscout).
func childEnv(environ []string, env map[string]string) []string {
	out := slices.DeleteFunc(upstreamEnv(environ, env), func(kv string) bool {
		return strings.HasPrefix(kv, DepthEnv+"=")
	})
	out = append(out, DepthEnv+"="+strconv.Itoa(Depth(environ)+1))
	sort.Strings(out)
	return out
}
