@_spi(Format) public import Quire

/// How books and listings show an entry's place, weather and mood, the
/// same in every export (HTML, EPUB, PDF) and in `quire show`.
public enum EntryDisplay {
    /// The place as a line: its names (`Seething Lane, London, England`);
    /// a location that has coordinates but no name shows them
    /// (`51.50980° N, 0.07960° W`); "" when it has neither.
    public static func place(_ location: Location) -> String {
        let names = [location.placeName, location.locality, location.region, location.country].filter { !$0.isEmpty }
        if !names.isEmpty { return names.joined(separator: ", ") }
        guard let latitude = location.latitude, let longitude = location.longitude, latitude.isFinite, longitude.isFinite else { return "" }
        return degrees(latitude, positive: "N", negative: "S") + ", " + degrees(longitude, positive: "E", negative: "W")
    }

    /// `51.50980° N`: five decimals (about a metre), the hemisphere by letter.
    static func degrees(_ value: Double, positive: String, negative: String) -> String {
        let scaled = Int64((abs(value) * 100_000).rounded())
        let fraction = String(scaled % 100_000)
        return "\(scaled / 100_000).\(String(repeating: "0", count: 5 - fraction.count))\(fraction)° \(value < 0 ? negative : positive)"
    }

    /// The weather as a line: conditions, then the temperature to a tenth
    /// of a degree (`Frost, -1.5 °C`); "" when neither is known.
    public static func weather(_ weather: Weather) -> String {
        var s = weather.conditions
        if let t = weather.temperatureCelsius, t.isFinite {
            s += (s.isEmpty ? "" : ", ") + YAMLWriter.floatText((t * 10).rounded() / 10) + " °C"
        }
        return s
    }
}
