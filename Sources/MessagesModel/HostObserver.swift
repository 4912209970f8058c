import Foundation

/// Sees everything the host does that is not a call into an extension. The
/// recorder implements it; callbacks and actions it sees by wrapping extensions.
public protocol HostObserver: AnyObject {
    /// An instance was created, before any call into it.
    func instanceStarted(_ info: InstanceInfo)
    /// An instance ended (Messages quit on its device).
    func instanceEnded(_ info: InstanceInfo)
    /// The user acted, before the host carries the action out. `instance` is the one
    /// the action concerns.
    func userActed(_ action: UserAction, instance: InstanceInfo)
    func transcriptChanged(_ change: TranscriptChange, instance: InstanceInfo)
}
