// Every instant inside Tempo is a `Duration` measured from its clock's origin. These helpers do
// the arithmetic on them without ever trapping: a sum that would overflow saturates, so
// `.seconds(Int64.max)` simply means "not in this program's life". `TempoTesting.ManualClock`
// uses them too, so every instant in the package saturates the same way.

extension Duration {
    /// The largest representable duration.
    package static let saturatedMax = Duration(attoseconds: .max)
    /// The smallest representable duration.
    package static let saturatedMin = Duration(attoseconds: .min)

    /// `self + other`, clamped to the representable range instead of trapping.
    @inline(__always)
    package func adding(_ other: Duration) -> Duration {
        let (sum, overflow) = attoseconds.addingReportingOverflow(other.attoseconds)
        if overflow { return other > .zero ? .saturatedMax : .saturatedMin }
        return Duration(attoseconds: sum)
    }

    /// `self - other`, clamped to the representable range instead of trapping.
    @inline(__always)
    package func subtracting(_ other: Duration) -> Duration {
        let (difference, overflow) = attoseconds.subtractingReportingOverflow(other.attoseconds)
        if overflow { return other > .zero ? .saturatedMin : .saturatedMax }
        return Duration(attoseconds: difference)
    }

    /// `self × factor`, saturating instead of trapping.
    package func saturatingMultiplied(by factor: some BinaryInteger) -> Duration {
        let factor = Int128(factor)
        let (product, overflow) = attoseconds.multipliedReportingOverflow(by: factor)
        if overflow { return (self < .zero) == (factor < 0) ? .saturatedMax : .saturatedMin }
        return Duration(attoseconds: product)
    }
}
