#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The few file operations the generator needs, on the C library: no Foundation.
enum Files {
    /// The file's bytes, or `nil` when it cannot be read.
    static func read(_ path: String) -> [UInt8]? {
        guard let file = fopen(path, "rb") else { return nil }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = fread(&buffer, 1, buffer.count, file)
            if count > 0 { bytes.append(contentsOf: buffer[0..<count]) }
            if count < buffer.count { break }
        }
        return ferror(file) == 0 ? bytes : nil
    }

    /// Writes `bytes` to `path`, replacing it; returns whether it worked.
    static func write(_ bytes: [UInt8], to path: String) -> Bool {
        guard let file = fopen(path, "wb") else { return false }
        let written = bytes.withUnsafeBufferPointer { fwrite($0.baseAddress, 1, $0.count, file) }
        return fclose(file) == 0 && written == bytes.count
    }

    /// Makes the directory if it does not exist.
    static func makeDirectory(_ path: String) {
        _ = mkdir(path, 0o755)
    }

    /// The names in a directory, sorted; empty when it cannot be read.
    static func list(_ path: String) -> [String] {
        guard let directory = opendir(path) else { return [] }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }
}
