// Every instant inside Tempo is a `Duration` measured from its clock's origin. These helpers do
// the arithmetic on them without ever trapping: a sum that would overflow saturates, so
// `.seconds(Int64.max)` simply means "not in this program's life".

extension Duration {
    /// The largest representable duration.
    static let saturatedMax = Duration(attoseconds: .max)
    /// The smallest representable duration.
    static let saturatedMin = Duration(attoseconds: .min)

    /// `self + other`, clamped to the representable range instead of trapping.
    func adding(_ other: Duration) -> Duration {
        let (sum, overflow) = attoseconds.addingReportingOverflow(other.attoseconds)
        if overflow { return other > .zero ? .saturatedMax : .saturatedMin }
        return Duration(attoseconds: sum)
    }

    /// `self - other`, clamped to the representable range instead of trapping.
    func subtracting(_ other: Duration) -> Duration {
        let (difference, overflow) = attoseconds.subtractingReportingOverflow(other.attoseconds)
        if overflow { return other > .zero ? .saturatedMin : .saturatedMax }
        return Duration(attoseconds: difference)
    }
}
