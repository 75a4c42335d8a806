# See README.md. Every target works on a fresh clone with ../shared beside it.
GO ?= go
PKGS := ./...

.PHONY: build run test test-race test-integration conformance-record bench bench-sidebyside bench-alert-flood fuzz lint tidy

build:
	$(GO) build -o bin/peregrine ./cmd/peregrine

run: build
	./bin/peregrine serve

# Fast unit tests (integration tests with real Zabbix programs are skipped).
test:
	$(GO) test -short -count=1 $(PKGS)

# What CI runs: every test, real programs included, with the race detector.
# -parallel 4: the tests marked parallel wait on real agents' schedules
# (minutes each), not the CPU; they overlap.
test-race:
	$(GO) test -race -count=1 -parallel 4 -timeout 35m $(PKGS)

test-integration:
	$(GO) test -count=1 -run Integration -timeout 20m $(PKGS)

# Re-record the conformance golden files (internal/conformance/testdata/golden)
# from a live Zabbix 6.0 peer: start it first with ../shared/peers/zabbix/setup.sh
# (as root). CI replays the recorded files against Peregrine without a peer.
conformance-record:
	$(GO) test -count=1 -run TestConformance ./internal/conformance -record $(if $(CASE),-case $(CASE))

# Hot-path benchmarks; compare runs with benchstat.
bench:
	$(GO) test -run '^$$' -bench . -benchmem -count 6 ./internal/zbx/... ./internal/ingest/ ./internal/pipeline/ ./internal/history/...

# The alert flood at full size (issue 25): 100,000 problem events × one action
# through a webhook media type (maxsessions 8) whose receiver on 127.0.0.1 takes
# 1 ms a request, with a queue of 500; logs the time until every alert is
# delivered once. CI runs the same test with 10,000 (FLOOD=10000); FSYNC=batch
# makes each delivery's status durable before its session is free again.
FLOOD ?= 100000
FSYNC ?= interval
bench-alert-flood:
	PEREGRINE_ALERT_FLOOD=$(FLOOD) PEREGRINE_ALERT_FLOOD_FSYNC=$(FSYNC) $(GO) test -count=1 -run '^TestIntegrationAlertFlood$$' -timeout 30m -v ./internal/server/

# Side by side with Zabbix 6.0 (BENCHMARKS.md, issues 12 and 14), as root with ../shared beside it:
#   make bench-sidebyside WHAT="icmp 10"      (also: "snmp sweep 1 5", "external rate 1 32",
#                                              "preprocess peregrine 2 3"; see bench/sidebyside.sh)
# QUIET is the wrapper that takes the machine-wide bench lock and gives the run
# CPU 0 (bench/quiet.sh; QUIET= runs directly).
QUIET ?= bash bench/quiet.sh
bench-sidebyside: build
	BIN=bin/peregrine $(QUIET) bench/peer-run.sh bench/sidebyside.sh $(WHAT)

# A short fuzzing budget per target. Every `func Fuzz` in the tree has a
# line here: internal/buildcheck's test fails when one is missing.
FUZZTIME ?= 20s
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzReadFrame$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 5s ./internal/zbx/
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 5s ./internal/zbx/itemkey/
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 5s ./internal/zbx/snmpoid/
	$(GO) test -run '^$$' -fuzz '^FuzzResponse$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 5s ./internal/poll/snmp/
	$(GO) test -run '^$$' -fuzz '^FuzzTrap$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 5s ./internal/ingest/snmptrap/
	$(GO) test -run '^$$' -fuzz '^FuzzDecodeProxyData$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 5s ./internal/ingest/
	$(GO) test -run '^$$' -fuzz '^FuzzSenderData$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 5s ./internal/ingest/
	$(GO) test -run '^$$' -fuzz '^FuzzParseTrapPeers$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 5s ./internal/catalog/
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 5s ./internal/config/
	$(GO) test -run '^$$' -fuzz '^FuzzSenderJSON$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 5s ./internal/ingest/
	$(GO) test -run '^$$' -fuzz '^FuzzAgentData$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 5s ./internal/ingest/
	$(GO) test -run '^$$' -fuzz '^FuzzDecodeSamples$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 5s ./internal/history/record/
	$(GO) test -run '^$$' -fuzz '^FuzzReplay$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 5s ./internal/wal/
	$(GO) test -run '^$$' -fuzz '^FuzzBlockIndex$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 5s ./internal/history/engine/
	$(GO) test -run '^$$' -fuzz '^FuzzBlockIndexV2$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 5s ./internal/history/engine/
	$(GO) test -run '^$$' -fuzz '^FuzzRequest$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 5s ./internal/api/
	$(GO) test -run '^$$' -fuzz '^FuzzAppendString$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 5s ./internal/api/zjson/
	$(GO) test -run '^$$' -fuzz '^FuzzParseHash$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 5s ./internal/auth/
	$(GO) test -run '^$$' -fuzz '^FuzzParseKey$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 5s ./internal/poll/icmp/
	$(GO) test -run '^$$' -fuzz '^FuzzParseKey$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 5s ./internal/poll/tcpsvc/
	$(GO) test -run '^$$' -fuzz '^FuzzParseSDR$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 5s ./internal/poll/ipmi/
	$(GO) test -run '^$$' -fuzz '^FuzzParseOutput$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 5s ./internal/poll/external/
	$(GO) test -run '^$$' -fuzz '^FuzzJSONString$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 5s ./internal/poll/odbc/
	$(GO) test -run '^$$' -fuzz '^FuzzDownsampleGrid$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 5s ./internal/history/
	$(GO) test -run '^$$' -fuzz '^FuzzAppendFloat$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 5s ./internal/api/zjson/
	$(GO) test -run '^$$' -fuzz '^FuzzHistoryParams$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 5s ./internal/api/
	$(GO) test -run '^$$' -fuzz '^FuzzParseRef$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 5s ./internal/usermacro/
	$(GO) test -run '^$$' -fuzz '^FuzzParseSpec$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 5s ./internal/catalog/
	$(GO) test -run '^$$' -fuzz '^FuzzExpand$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 5s ./internal/alert/
	$(GO) test -run '^$$' -fuzz '^FuzzParseSeconds$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 5s ./internal/catalog/
	$(GO) test -run '^$$' -fuzz '^FuzzDecodeFloats$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 5s ./internal/history/engine/chunkenc/
	$(GO) test -run '^$$' -fuzz '^FuzzDecodeUints$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 5s ./internal/history/engine/chunkenc/
	$(GO) test -run '^$$' -fuzz '^FuzzDecodeStrings$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 5s ./internal/history/engine/chunkenc/
	$(GO) test -run '^$$' -fuzz '^FuzzDecode$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 5s ./internal/event/
	$(GO) test -run '^$$' -fuzz '^FuzzDecodeLogs$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 5s ./internal/history/engine/chunkenc/
	$(GO) test -run '^$$' -fuzz '^FuzzInspect$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 5s ./internal/history/engine/chunkenc/
	$(GO) test -run '^$$' -fuzz '^FuzzRoundTripFloats$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 5s ./internal/history/engine/chunkenc/
	$(GO) test -run '^$$' -fuzz '^FuzzRoundTripUints$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 5s ./internal/history/engine/chunkenc/
	$(GO) test -run '^$$' -fuzz '^FuzzRoundTripStrings$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 5s ./internal/history/engine/chunkenc/
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 5s ./internal/zbx/delay/
	$(GO) test -run '^$$' -fuzz '^FuzzReply$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 5s ./internal/poll/agent/
	$(GO) test -run '^$$' -fuzz '^FuzzDecodeReply$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 5s ./internal/poll/jmx/
	$(GO) test -run '^$$' -fuzz '^FuzzFormatDN$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 5s ./internal/zbx/zbxtls/
	$(GO) test -run '^$$' -fuzz '^FuzzReadClientHello$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 5s ./internal/zbx/zbxtls/
	$(GO) test -run '^$$' -fuzz '^FuzzServerHandshake$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 5s ./internal/zbx/zbxpsk/
	$(GO) test -run '^$$' -fuzz '^FuzzClientHandshake$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 5s ./internal/zbx/zbxpsk/
	$(GO) test -run '^$$' -fuzz '^FuzzQuery$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 5s ./internal/preprocess/jsonpath/
	$(GO) test -run '^$$' -fuzz '^FuzzRun$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 5s ./internal/preprocess/
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 5s ./internal/expr/
	$(GO) test -run '^$$' -fuzz '^FuzzToUTF8$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 5s ./internal/zbx/charset/
	$(GO) test -run '^$$' -fuzz '^FuzzServer$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 5s ./internal/poll/telnet/

# staticcheck at a pinned version, built by the go command from the module
# proxy (checksum-verified, cached after the first run) rather than added to
# go.mod: it is a tool, not a dependency of the server.
STATICCHECK ?= $(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2

lint:
	$(GO) vet $(PKGS)
	@test -z "$$(gofmt -l cmd internal)" || (gofmt -l cmd internal; exit 1)
	$(STATICCHECK) $(PKGS)

tidy:
	$(GO) mod tidy -e
	git diff --exit-code go.mod go.sum
