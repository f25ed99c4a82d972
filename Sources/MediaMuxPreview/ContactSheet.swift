import MediaMuxBase
import MediaMuxCore
/// A contact sheet: evenly spaced frames in a grid on a dark background, each
/// labelled with its time. Drawn in plain RGB with a built-in pixel font, so
/// it needs no font library.
struct SheetLayout: Equatable {
    var columns: Int
    var rows: Int
    var tileWidth: Int
    var tileHeight: Int
    /// Pixels per font pixel of the time labels; nil when labels do not fit the tiles.
    var labelScale: Int?
    static let gap = 8

    var width: Int { columns * tileWidth + (columns + 1) * Self.gap }
    var height: Int { rows * tileHeight + (rows + 1) * Self.gap }

    /// Top-left corner of tile `index`, filled row by row.
    func origin(of index: Int) -> (x: Int, y: Int) {
        let (row, column) = index.quotientAndRemainder(dividingBy: columns)
        return (Self.gap + column * (tileWidth + Self.gap), Self.gap + row * (tileHeight + Self.gap))
    }
}

/// An RGB picture being drawn on.
struct Canvas {
    let width: Int
    let height: Int
    private(set) var pixels: [UInt8]

    init(width: Int, height: Int, gray: UInt8) {
        self.width = width
        self.height = height
        pixels = [UInt8](repeating: gray, count: width * height * 3)
    }

    mutating func place(_ frame: PreviewFrame, x: Int, y: Int) {
        let step = frame.layout.bytesPerPixel
        guard frame.pixels.count >= frame.width * frame.height * step else { return }
        for row in 0..<frame.height where y + row >= 0 && y + row < height {
            for column in 0..<frame.width where x + column >= 0 && x + column < width {
                let from = (row * frame.width + column) * step
                let to = ((y + row) * width + x + column) * 3
                pixels[to] = frame.pixels[from]
                pixels[to + 1] = frame.pixels[from + 1]
                pixels[to + 2] = frame.pixels[from + 2]
            }
        }
    }

    /// Darkens a rectangle to a third of its brightness (a backing for text).
    mutating func shade(x: Int, y: Int, width boxWidth: Int, height boxHeight: Int) {
        forEachPixel(x: x, y: y, width: boxWidth, height: boxHeight) { pixels, at in
            for channel in 0..<3 { pixels[at + channel] /= 3 }
        }
    }

    mutating func fill(x: Int, y: Int, size: Int, value: UInt8) {
        forEachPixel(x: x, y: y, width: size, height: size) { pixels, at in
            for channel in 0..<3 { pixels[at + channel] = value }
        }
    }

    /// Visits the byte offset of each pixel of a rectangle, clipped to the canvas.
    private mutating func forEachPixel(x: Int, y: Int, width boxWidth: Int, height boxHeight: Int, _ body: (inout [UInt8], Int) -> Void) {
        let rows = max(0, y)..<max(max(0, y), min(height, y + boxHeight))
        let columns = max(0, x)..<max(max(0, x), min(width, x + boxWidth))
        for row in rows {
            for column in columns { body(&pixels, (row * width + column) * 3) }
        }
    }

    /// Draws `text` in white, each font pixel `scale` pixels square.
    mutating func write(_ text: String, x: Int, y: Int, scale: Int) {
        var penX = x
        for character in text {
            guard let rows = PixelFont.glyphs[character] else {
                penX += PixelFont.advance * scale
                continue
            }
            for (row, bits) in rows.enumerated() {
                for (column, bit) in bits.enumerated() where bit == "#" {
                    fill(x: penX + column * scale, y: y + row * scale, size: scale, value: 255)
                }
            }
            penX += PixelFont.advance * scale
        }
    }

    var frame: PreviewFrame {
        PreviewFrame(time: .zero(), width: width, height: height, layout: .rgb, pixels: pixels)
    }
}

/// A 5x7 font for what time labels need.
enum PixelFont {
    static let height = 7
    static let advance = 6

    static func width(of text: String, scale: Int) -> Int { max(0, text.count * advance - 1) * scale }

    static let glyphs: [Character: [String]] = [
        "0": [" ### ", "#   #", "#  ##", "# # #", "##  #", "#   #", " ### "],
        "1": ["  #  ", " ##  ", "  #  ", "  #  ", "  #  ", "  #  ", " ### "],
        "2": [" ### ", "#   #", "    #", "   # ", "  #  ", " #   ", "#####"],
        "3": ["#####", "   # ", "  #  ", "   # ", "    #", "#   #", " ### "],
        "4": ["   # ", "  ## ", " # # ", "#  # ", "#####", "   # ", "   # "],
        "5": ["#####", "#    ", "#### ", "    #", "    #", "#   #", " ### "],
        "6": ["  ## ", " #   ", "#    ", "#### ", "#   #", "#   #", " ### "],
        "7": ["#####", "    #", "   # ", "  #  ", " #   ", " #   ", " #   "],
        "8": [" ### ", "#   #", "#   #", " ### ", "#   #", "#   #", " ### "],
        "9": [" ### ", "#   #", "#   #", " ####", "    #", "   # ", " ##  "],
        ":": ["     ", "  #  ", "  #  ", "     ", "  #  ", "  #  ", "     "],
        ".": ["     ", "     ", "     ", "     ", "     ", " ##  ", " ##  "],
    ]
}

/// `m:ss.mmm`, or `h:mm:ss.mmm` from an hour on: how a sheet labels a frame.
func sheetLabel(_ seconds: Double) -> String {
    // At most 30,000 years: a damaged file's timestamps may say more.
    let millis = Int((min(max(0, seconds), 1e12) * 1000).rounded())
    let (totalSeconds, fraction) = millis.quotientAndRemainder(dividingBy: 1000)
    let (totalMinutes, second) = totalSeconds.quotientAndRemainder(dividingBy: 60)
    let (hour, minute) = totalMinutes.quotientAndRemainder(dividingBy: 60)
    func pad(_ value: Int, _ digits: Int) -> String {
        let text = String(value)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }
    let tail = pad(second, 2) + "." + pad(fraction, 3)
    return hour > 0 ? "\(hour):\(pad(minute, 2)):\(tail)" : "\(minute):\(tail)"
}

/// Draws a sheet one frame at a time, so only the sheet is held in memory.
/// Tiles keep their frame's own size, centred in the cell; the label sits in
/// the tile's lower left corner when the plan says it fits.
struct SheetDrawing {
    let layout: SheetLayout
    private(set) var canvas: Canvas
    private var placed = 0

    init(layout: SheetLayout) {
        self.layout = layout
        canvas = Canvas(width: layout.width, height: layout.height, gray: 32)
    }

    mutating func add(_ frame: PreviewFrame) {
        guard placed < layout.columns * layout.rows else { return }
        let cell = layout.origin(of: placed)
        placed += 1
        let x = cell.x + (layout.tileWidth - frame.width) / 2
        let y = cell.y + (layout.tileHeight - frame.height) / 2
        canvas.place(frame, x: x, y: y)
        guard let scale = layout.labelScale else { return }
        let label = sheetLabel(frame.time.seconds)
        let pad = 2 * scale
        let boxWidth = PixelFont.width(of: label, scale: scale) + 2 * pad
        let boxHeight = PixelFont.height * scale + 2 * pad
        guard boxWidth <= frame.width, boxHeight <= frame.height else { return }
        let boxY = y + frame.height - boxHeight
        canvas.shade(x: x, y: boxY, width: boxWidth, height: boxHeight)
        canvas.write(label, x: x + pad, y: boxY + pad, scale: scale)
    }
}
