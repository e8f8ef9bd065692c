import Tempo
import TempoTesting

/// A run stamped with the registry's time in whole milliseconds: `"op@ms"`.
func stamp(_ label: String, _ registry: TempoRegistry) -> String {
    let (seconds, attoseconds) = registry.now.components
    return "\(label)@\(Int(seconds) * 1_000 + Int(attoseconds / 1_000_000_000_000_000))"
}

extension Log where Value == String {
    /// Appends `label` stamped with the registry's time.
    func mark(_ label: String, _ registry: TempoRegistry) {
        append(stamp(label, registry))
    }
}
