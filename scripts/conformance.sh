#!/usr/bin/env bash
# Run upstream Kubernetes conformance tests against the lab (make conformance).
#
#   scripts/conformance.sh            every [Conformance] test of the DNS, Services,
#                                     Pods, ConfigMap, Secret and EmptyDir suites
#   scripts/conformance.sh --subset   only those of the DNS and Services suites (the
#                                     lab e2e test of make test runs this)
#
# Steps: build e2e.test and ginkgo (scripts/build-k8s.sh --only e2e.test,ginkgo,
# cached) and the images it pulls (scripts/build-images.sh --set conformance,
# cached); use the
# running lab, or bring one up with scripts/lab.sh up and remove it after
# (KEEP=1 keeps it); push the images into the lab registry, where the nodes'
# containerd mirror for registry.k8s.io finds them under the very names
# e2e.test asks for; run e2e.test on CONFORMANCE_PROCS ginkgo processes with
# n1's admin kubeconfig through the VIP, --provider=skeleton, the focus below
# and --report-dir; print passed, failed and skipped from the JUnit report.
# Exits non-zero when a test failed.
#
# No [Serial] test is skipped: ginkgo runs a [Serial] one (EmptyDir wrapper
# volumes "should not cause race condition when used for configmaps") alone,
# after every parallel one, so it has the cluster to itself as it requires.
#
# Environment:
#   CONFORMANCE_REPORT_DIR  where the JUnit report goes (default bin/conformance)
#   CONFORMANCE_FOCUS       a ginkgo focus regex replacing the suites' one
#   CONFORMANCE_SKIP        a ginkgo skip regex (default: none)
#   CONFORMANCE_TIMEOUT     ginkgo's timeout for the whole run (default 2h)
#   CONFORMANCE_PROCS       ginkgo processes running tests at once (default 4;
#                           1 runs them one at a time)
#   CONFORMANCE_FLAKE_ATTEMPTS
#                           attempts a test gets in all (default 2: a failed test
#                           runs once more, as upstream's CI jobs do; one that
#                           passes on its second attempt counts as passed and is
#                           counted as flaky in the summary; 1 to 5, 1 never
#                           retries)
#   KCORE_LAB_DIR, KCORE_CACHE, KEEP as for scripts/lab.sh
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
LAB=${KCORE_LAB_DIR:-/var/lib/kcore-lab}
CACHE=${KCORE_CACHE:-$HOME/.cache/kcore}
REPORT_DIR=${CONFORMANCE_REPORT_DIR:-$REPO/bin/conformance}
TIMEOUT=${CONFORMANCE_TIMEOUT:-2h}
SKIP=${CONFORMANCE_SKIP:-}
PROCS=${CONFORMANCE_PROCS:-4}
ATTEMPTS=${CONFORMANCE_FLAKE_ATTEMPTS:-2}
KEEP=${KEEP:-0}
BRIDGE=kcore-lab0
REGISTRY_ADDR=10.77.0.1:5000

# The suites, by the names e2e.test gives them (e2e.test --list-tests).
SUBSET_FOCUS='\[sig-network\] (DNS|Services) .*\[Conformance\]'
FULL_FOCUS='(\[sig-network\] (DNS|Services)|\[sig-node\] (Pods|Pods Extended|ConfigMap|Secrets)|\[sig-storage\] (ConfigMap|Secrets|EmptyDir volumes|EmptyDir wrapper volumes)) .*\[Conformance\]'

focus=$FULL_FOCUS
case "${1:-}" in
  "") ;;
  --subset) focus=$SUBSET_FOCUS ;;
  -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
  *) echo "usage: scripts/conformance.sh [--subset]" >&2; exit 2 ;;
esac
focus=${CONFORMANCE_FOCUS:-$focus}

say() { printf '[conformance] %s\n' "$*" >&2; }
die() { say "ERROR: $*"; exit 1; }

[ "$(id -u)" -eq 0 ] || die "the lab needs root; run make conformance as root"

[[ $PROCS =~ ^[1-9][0-9]?$ ]] || die "CONFORMANCE_PROCS must be 1 to 99, got $PROCS"
[[ $ATTEMPTS =~ ^[1-5]$ ]] || die "CONFORMANCE_FLAKE_ATTEMPTS must be 1 to 5, got $ATTEMPTS"

"$REPO/scripts/build-k8s.sh" --only e2e.test,ginkgo
"$REPO/scripts/build-images.sh" --set conformance
E2E=$CACHE/bin/current/e2e.test
GINKGO=$CACHE/bin/current/ginkgo

started=0
if ! ip link show "$BRIDGE" >/dev/null 2>&1; then
  say "no lab running: scripts/lab.sh up"
  (cd "$REPO" && make build >/dev/null)
  "$REPO/scripts/lab.sh" up
  started=1
fi
cleanup() {
  if [ "$started" = 1 ] && [ "$KEEP" != 1 ]; then "$REPO/scripts/lab.sh" down || true; fi
}
trap cleanup EXIT

"$REPO/scripts/lab-registry.sh" push "$LAB/registry" "$REGISTRY_ADDR" conformance

mkdir -p "$REPORT_DIR"
rm -f "$REPORT_DIR"/junit_*.xml
say "ginkgo --procs $PROCS --flake-attempts $ATTEMPTS e2e.test --ginkgo.focus '$focus'${SKIP:+ --ginkgo.skip '$SKIP'} (report in $REPORT_DIR)"
t0=$SECONDS
rc=0
"$GINKGO" --procs "$PROCS" --flake-attempts "$ATTEMPTS" --timeout "$TIMEOUT" --no-color -v "$E2E" -- \
  --kubeconfig "$LAB/n1/etc/kubernetes/admin.conf" --provider=skeleton \
  --kubectl-path "$CACHE/bin/current/kubectl" \
  --report-dir "$REPORT_DIR" --ginkgo.focus "$focus" ${SKIP:+--ginkgo.skip "$SKIP"} \
  2>&1 | tee "$REPORT_DIR/e2e.log" || rc=$?
elapsed=$((SECONDS - t0))

junit=$REPORT_DIR/junit_01.xml
[ -f "$junit" ] || die "e2e.test wrote no $junit (exit $rc); see $REPORT_DIR/e2e.log"
count() { grep -oE "$1" "$junit" | wc -l || true; }
# Only specs ("[It] ...") count as passed: the suite's setup and report nodes
# are test cases of the report too. A failed one fails the run.
passed=$(count '<testcase name="\[It\] [^"]*" classname="[^"]*" status="passed"')
failed=$(count 'status="(failed|timedout|panicked|interrupted|aborted)"')
# Specs the focus filtered out are "skipped"; a focused one that skipped itself
# says why ("skipped - ...").
skipped=$(count '<skipped message="skipped - ')
# ginkgo's summary names the specs that passed only on a later attempt.
flaky=$(grep -oE '[0-9]+ Flaked' "$REPORT_DIR/e2e.log" | tail -n 1 | cut -d' ' -f1 || true)
printf 'conformance: %d passed (%d of them flaky), %d failed, %d skipped in %dm%02ds (JUnit %s)\n' \
  "$passed" "${flaky:-0}" "$failed" "$skipped" $((elapsed / 60)) $((elapsed % 60)) "$junit"
if [ "${flaky:-0}" -gt 0 ]; then
  say "flaky (failed, then passed on a later attempt):"
  grep -A2 -E '\[FLAKEY TEST' "$REPORT_DIR/e2e.log" | sed 's/^/  /' >&2 || true
fi
if [ "$failed" -gt 0 ]; then
  say "failed:"
  grep -oE '<testcase name="[^"]*" classname="[^"]*" status="(failed|timedout|panicked|interrupted|aborted)"' "$junit" |
    sed -E 's/<testcase name="([^"]*)".*status="([^"]*)"/  \2: \1/' >&2
fi
[ "$rc" = 0 ] && [ "$failed" = 0 ]
