//! `evtc advise --plot OUT.svg|OUT.png`: the studies' two pictures of a file, drawn with
//! `plotters` as SVG; a PNG is that SVG rasterised by `resvg` at twice its size, its text drawn
//! with the system's fonts.
//!
//! Top: predicted file size against read (decompression) speed, one point per uniform codec, the
//! file's current settings, each goal's recommendation and the external baseline. Bottom: the
//! compression ratio of the largest branches under the chosen goal's setting and under evtc's
//! default codec.

use std::path::Path;

use anyhow::anyhow;
use evtc_codecs::Codec;
use evtc_tools::advise::{Advice, FilePoint, Goal};
use plotters::prelude::*;

/// Branches in the ratio panel, largest first.
const BARS: usize = 24;

/// The picture's size in SVG pixels.
const SIZE: (u32, u32) = (1100, 1120);

/// Draws the advice into `path`, an SVG or (by its extension) a PNG file.
pub fn draw(advice: &Advice, goal: Goal, path: &Path) -> anyhow::Result<()> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(plot_error)?;
        let (top, bottom) = root.split_vertically(540);
        scatter(advice, goal, &top)?;
        bars(advice, goal, &bottom)?;
        root.present().map_err(plot_error)?;
    }
    let bytes = match path.extension().and_then(|e| e.to_str()) {
        Some("png") => png(&svg)?,
        _ => svg.into_bytes(),
    };
    std::fs::write(path, bytes)?;
    Ok(())
}

/// The SVG rasterised at twice its size (for slides), with the system's fonts.
fn png(svg: &str) -> anyhow::Result<Vec<u8>> {
    use resvg::{tiny_skia, usvg};
    let mut options = usvg::Options::default();
    let fonts = options.fontdb_mut();
    fonts.load_system_fonts();
    // The plot asks for `sans-serif`: the first sans-serif family installed (fontdb's default
    // is Arial, which Linux systems rarely have), else any family.
    let families: Vec<String> = fonts
        .faces()
        .flat_map(|f| f.families.iter().map(|(name, _)| name.clone()))
        .collect();
    let sans = families
        .iter()
        .find(|f| f.contains("Sans") && !f.contains("Mono"))
        .or(families.first())
        .cloned()
        .ok_or_else(|| {
            anyhow!(
                "a PNG plot draws its text with the system's fonts, and this system has none: \
                 draw an .svg instead"
            )
        })?;
    fonts.set_sans_serif_family(sans);
    let tree = usvg::Tree::from_str(svg, &options).map_err(plot_error)?;
    let scale = 2.0;
    let size = tree.size();
    let (w, h) = (
        (size.width() * scale).ceil() as u32,
        (size.height() * scale).ceil() as u32,
    );
    let mut pixmap =
        tiny_skia::Pixmap::new(w, h).ok_or_else(|| anyhow!("cannot draw a {w}x{h} picture"))?;
    pixmap.fill(tiny_skia::Color::WHITE);
    resvg::render(
        &tree,
        tiny_skia::Transform::from_scale(scale, scale),
        &mut pixmap.as_mut(),
    );
    pixmap.encode_png().map_err(plot_error)
}

fn plot_error(e: impl std::fmt::Display) -> anyhow::Error {
    anyhow!("plotting failed: {e}")
}

/// File size (MB) against read speed (MB/s, log scale).
fn scatter(
    advice: &Advice,
    goal: Goal,
    area: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
) -> anyhow::Result<()> {
    let goals: Vec<FilePoint> = advice.goals.iter().map(|g| g.predicted.clone()).collect();
    // Stored as is, the file is its uncompressed size: said in the caption, not drawn (it would
    // squash every other point).
    let none = Codec::NONE.to_string();
    let uniform: Vec<&FilePoint> = advice.uniform.iter().filter(|p| p.label != none).collect();
    let raw = advice
        .uniform
        .iter()
        .find(|p| p.label == none)
        .map_or(String::new(), |p| {
            format!(" (uncompressed: {:.1} MB)", p.stored_bytes as f64 / 1e6)
        });
    let every = uniform
        .iter()
        .copied()
        .chain(&goals)
        .chain(advice.current.iter())
        .chain(&advice.external);
    let (mut x0, mut x1, mut y0, mut y1) = (f64::INFINITY, 0.0f64, f64::INFINITY, 0.0f64);
    for p in every {
        x0 = x0.min(p.read_mb_per_s);
        x1 = x1.max(p.read_mb_per_s);
        y0 = y0.min(p.stored_bytes as f64 / 1e6);
        y1 = y1.max(p.stored_bytes as f64 / 1e6);
    }
    if !(x0 > 0.0 && y0 > 0.0) {
        return Ok(());
    }
    let mut chart = ChartBuilder::on(area)
        .caption(
            format!(
                "{}: predicted file size against read speed{raw}",
                advice.input
            ),
            ("sans-serif", 20),
        )
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(70)
        .build_cartesian_2d((x0 * 0.7..x1 * 1.6).log_scale(), y0 * 0.9..y1 * 1.05)
        .map_err(plot_error)?;
    chart
        .configure_mesh()
        .x_desc("read (decompression) speed, MB/s of uncompressed data, log scale")
        .y_desc("file size, MB")
        .draw()
        .map_err(plot_error)?;
    let series: [(&str, RGBColor, Vec<&FilePoint>); 4] = [
        ("uniform codec", BLUE, uniform),
        (
            "external blocks",
            RGBColor(150, 150, 150),
            advice.external.iter().collect(),
        ),
        ("current", BLACK, advice.current.iter().collect()),
        ("recommended (--goal)", RED, goals.iter().collect()),
    ];
    for (name, color, points) in series {
        if points.is_empty() {
            continue;
        }
        let recommended = name.starts_with("recommended");
        let label = |p: &FilePoint| {
            if name.starts_with("external") {
                String::new()
            } else if recommended && p.label == goal.to_string() {
                format!("{} (chosen)", p.label)
            } else {
                p.label.clone()
            }
        };
        let font = ("sans-serif", 12).into_font().color(&color);
        let at = |p: &FilePoint| (p.read_mb_per_s, p.stored_bytes as f64 / 1e6);
        let drawn = if recommended {
            chart.draw_series(points.iter().map(|p| {
                EmptyElement::at(at(p))
                    + TriangleMarker::new((0, 0), 7, color.filled())
                    + Text::new(label(p), (6, -14), font.clone())
            }))
        } else {
            chart.draw_series(points.iter().map(|p| {
                EmptyElement::at(at(p))
                    + Circle::new((0, 0), 4, color.filled())
                    + Text::new(label(p), (6, 2), font.clone())
            }))
        };
        drawn
            .map_err(plot_error)?
            .label(name)
            .legend(move |(x, y)| Circle::new((x, y), 4, color.filled()));
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperLeft)
        .draw()
        .map_err(plot_error)?;
    Ok(())
}

/// Ratios of the largest branches: the goal's setting against evtc's default codec.
fn bars(
    advice: &Advice,
    goal: Goal,
    area: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
) -> anyhow::Result<()> {
    let Some(chosen) = advice.goal(goal) else {
        return Ok(());
    };
    let default = Codec::DEFAULT;
    let mut rows: Vec<(String, u64, f64, f64)> = Vec::new();
    for (tree, choices) in advice.trees.iter().zip(&chosen.choices) {
        for (b, choice) in tree.branches.iter().zip(choices) {
            let Some(o) = choice.and_then(|i| b.outcomes.get(i)) else {
                continue;
            };
            let base = b
                .outcomes
                .iter()
                .filter(|o| o.codec == default && !o.rac && o.mantissa_bits.is_none())
                .map(|o| o.ratio)
                .fold(0.0, f64::max);
            rows.push((b.name.clone(), b.raw_bytes, o.ratio, base));
        }
    }
    rows.sort_by_key(|r| std::cmp::Reverse(r.1));
    rows.truncate(BARS);
    if rows.is_empty() {
        return Ok(());
    }
    let ratios = rows.iter().flat_map(|r| [r.2, r.3]);
    let (low, high) = ratios.fold((f64::INFINITY, 1.0f64), |(l, h), r| (l.min(r), h.max(r)));
    let names: Vec<String> = rows.iter().map(|r| r.0.clone()).collect();
    let n = rows.len() as f64;
    let mut chart = ChartBuilder::on(area)
        .caption(
            format!(
                "compression ratio of the {} largest branches: --goal {goal} against {default}",
                rows.len()
            ),
            ("sans-serif", 20),
        )
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(170)
        .build_cartesian_2d((low.min(1.0) * 0.9..high * 1.5).log_scale(), -0.6..n - 0.4)
        .map_err(plot_error)?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(rows.len())
        .y_label_formatter(&|y| {
            let i = y.round();
            if (y - i).abs() > 0.01 || i < 0.0 {
                return String::new();
            }
            let i = names.len().checked_sub(1 + i as usize);
            i.and_then(|i| names.get(i)).cloned().unwrap_or_default()
        })
        .x_desc("uncompressed / stored bytes, log scale")
        .draw()
        .map_err(plot_error)?;
    let colors = [(RED, format!("--goal {goal}")), (BLUE, default.to_string())];
    let floor = low.min(1.0) * 0.9;
    for (k, (color, label)) in colors.into_iter().enumerate() {
        chart
            .draw_series(rows.iter().enumerate().map(|(i, r)| {
                let ratio = if k == 0 { r.2 } else { r.3 };
                // The largest branch on top.
                let y = (rows.len() - 1 - i) as f64 - 0.4 + 0.4 * k as f64;
                Rectangle::new([(floor, y), (ratio, y + 0.38)], color.filled())
            }))
            .map_err(plot_error)?
            .label(label)
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 10, y + 5)], color.filled()));
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperRight)
        .draw()
        .map_err(plot_error)?;
    Ok(())
}
