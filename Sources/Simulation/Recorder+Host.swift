import MessagesHost
import MessagesModel
import Recorder

extension Recorder {
    /// A simulated host whose extensions this recorder records: it observes the host and
    /// wraps every extension the host makes.
    public func makeHost(seed: UInt64, urlPolicy: URLRules.Policy = .asShipped,
                         makeExtension: @escaping MessagesHost.Factory) -> MessagesHost {
        let host = MessagesHost(seed: seed, urlPolicy: urlPolicy, makeExtension: wrapping(makeExtension))
        host.observer = self
        return host
    }
}
