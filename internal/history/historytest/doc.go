// Package historytest is the contract every history.Store must meet,
// written once and run against each backend (memstore and the embedded
// engine; ClickHouse when it lands). It includes downsampling
// (history.Downsample, through the store's own Downsampler when it has
// one and through the generic fold of Read), checked against a naive
// reference over a model of what was written.
//
// It also holds the realistic data generator (realistic.go): a seeded,
// deterministic data set shaped like what Zabbix agents send (10 s / 60 s
// / 300 s intervals with jitter, a random nanosecond part, gauges with 2–3
// decimals, counters, sizes, 0/1 status, strings), for the engine's
// benchmarks, the contract suite and `peregrine bench`. Its API
// (Realistic, Gen.Series, Gen.Next, Gen.Count) is kept small and stable
// because benchmarks compare figures across versions: a change to the
// values it generates makes old figures incomparable, so it changes only
// with a note in BENCHMARKS.md.
//
// corpus.go holds data the project did not generate: values recorded
// from the real zabbix_agentd, zabbix_agent2 and snmpd on this project's
// machine (testdata/corpus.zst, re-recorded by TestRecordCorpus in
// corpus_record_test.go), served as recorded (CorpusRecorded) and as a
// day derived from the recording (CorpusDay, which says what it
// derives), by value class (float, uint, counter, rate, text, log) for
// the engine's size targets and the chunk encoders' fuzz seeds.
//
// fill.go writes the read benchmarks' data sets into any store (FillGauge,
// FillItems, Gen.Gauges), flushing and compacting stores that can, so that
// internal/api's history.get benchmarks and internal/api/histread's read
// the same data.
//
// Nothing here is safe for concurrent use unless its comment says so.
package historytest
