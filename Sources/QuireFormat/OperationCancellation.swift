import Synchronization

/// Cooperative cancellation for long work that runs synchronously: reading
/// or writing a vault, an import, an export.
///
/// The work asks ``check()`` at record and chunk granularity (each frame
/// appended, each entry written or exported). It is cancelled when the
/// `Task` it runs in is cancelled, or when the ``CancellationFlag`` bound to
/// ``flag`` for its scope is set (a progress handler that asked to stop).
/// A write cancelled this way throws before its commit frame, so nothing
/// of it is committed (`Spec/format.md §9.1`).
package enum OperationCancellation {
    /// A flag bound for the scope of one operation (see
    /// `$flag.withValue(_:operation:)`); nil outside one.
    @TaskLocal package static var flag: CancellationFlag?

    /// True when the current task is cancelled, or the bound flag is set.
    package static var isRequested: Bool {
        Task.isCancelled || (flag?.isSet ?? false)
    }

    /// Throws ``FormatError/cancelled`` when ``isRequested``.
    ///
    /// - Throws: ``FormatError/cancelled``.
    package static func check() throws(FormatError) {
        if isRequested { throw .cancelled }
    }
}

/// A one-way switch that asks an operation to stop (set by a progress
/// handler's answer, or by an outside condition such as a trapped signal).
/// Sendable through its atomic.
package final class CancellationFlag: Sendable {
    private let state = Atomic<Bool>(false)
    private let condition: (@Sendable () -> Bool)?

    /// A flag not set.
    package init() { condition = nil }

    /// A flag that also reads as set once `condition` returns true (asked at
    /// each check, so it must be cheap: an atomic load).
    package init(alsoSetWhen condition: @escaping @Sendable () -> Bool) { self.condition = condition }

    /// True once ``set()`` was called or the condition given at creation
    /// holds.
    package var isSet: Bool { state.load(ordering: .acquiring) || (condition?() ?? false) }

    /// Asks the operation to stop at its next check.
    package func set() { state.store(true, ordering: .releasing) }
}
