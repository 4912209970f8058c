// The collector: see Collector.swift.
