//! `weather-server`: an MCP server over Streamable HTTP answering forecasts and alerts for a few
//! cities from a dataset compiled into the binary (so the quickstart works offline). Built with
//! rmcp, the official Rust SDK.
//!
//! Usage: `weather-server --port 4484` prints `listening http://127.0.0.1:PORT` once it accepts
//! connections (`--port 0`: any free port); the endpoint is `/mcp`.

use std::collections::BTreeMap;
use std::io::Write;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;

use clap::Parser;
use rmcp::handler::server::wrapper::{Json, Parameters};
use rmcp::model::{Implementation, ServerCapabilities, ServerConfig};
use rmcp::schemars::JsonSchema;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, ServerHandler, tool, tool_handler, tool_router};
use serde::{Deserialize, Serialize};

/// The bundled dataset: per city, three days of forecast and the active alerts.
const DATASET: &str = include_str!("../../data/weather.json");

#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
struct Day {
    /// `today`, `tomorrow` or `day after`.
    day: String,
    /// The sky: sunny, cloudy, rain, snow...
    sky: String,
    /// Lowest temperature, °C.
    low_c: i32,
    /// Highest temperature, °C.
    high_c: i32,
    /// Wind speed, km/h.
    wind_kmh: u32,
    /// Rain, mm.
    rain_mm: u32,
}

#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
struct Alert {
    /// minor, moderate or severe.
    severity: String,
    /// What the alert is about.
    event: String,
    /// The alert's text.
    text: String,
}

#[derive(Debug, Deserialize)]
struct City {
    days: Vec<Day>,
    alerts: Vec<Alert>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
struct ForecastArgs {
    /// The city, e.g. "Lisbon" (see list_cities).
    city: String,
    /// How many days, 1 to 3 (default 1: today).
    #[serde(default)]
    days: Option<usize>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
struct Forecast {
    city: String,
    days: Vec<Day>,
    /// One line a person can read.
    summary: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
struct AlertsArgs {
    /// The city, e.g. "Berlin".
    city: String,
}

#[derive(Debug, Serialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
struct Alerts {
    city: String,
    count: usize,
    alerts: Vec<Alert>,
    /// One line a person can read.
    summary: String,
}

#[derive(Debug, Serialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
struct Cities {
    cities: Vec<String>,
}

#[derive(Clone)]
struct Weather {
    cities: Arc<BTreeMap<String, City>>,
}

impl Weather {
    fn new() -> Self {
        let cities: BTreeMap<String, City> =
            serde_json::from_str(DATASET).expect("the bundled weather dataset is valid JSON");
        Self {
            cities: Arc::new(cities),
        }
    }

    /// The city named (case-insensitive), or an invalid-params error listing the known ones.
    fn city(&self, name: &str) -> Result<(&String, &City), ErrorData> {
        self.cities
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name.trim()))
            .ok_or_else(|| {
                let known: Vec<&str> = self.cities.keys().map(String::as_str).collect();
                ErrorData::invalid_params(
                    format!("unknown city {name:?}; known: {}", known.join(", ")),
                    None,
                )
            })
    }
}

#[tool_router]
impl Weather {
    #[tool(
        description = "Forecast for a city: sky, temperatures, wind and rain for today and up to two more days.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    fn get_forecast(
        &self,
        Parameters(args): Parameters<ForecastArgs>,
    ) -> Result<Json<Forecast>, ErrorData> {
        let (name, city) = self.city(&args.city)?;
        let n = args.days.unwrap_or(1).clamp(1, city.days.len());
        let days: Vec<Day> = city.days[..n].to_vec();
        let summary = days
            .iter()
            .map(|d| {
                format!(
                    "{} {}: {}, {} to {} °C, wind {} km/h{}",
                    name,
                    d.day,
                    d.sky,
                    d.low_c,
                    d.high_c,
                    d.wind_kmh,
                    if d.rain_mm > 0 {
                        format!(", {} mm rain", d.rain_mm)
                    } else {
                        String::new()
                    }
                )
            })
            .collect::<Vec<_>>()
            .join("; ");
        Ok(Json(Forecast {
            city: name.clone(),
            days,
            summary,
        }))
    }

    #[tool(
        description = "Active weather alerts (snow, wind, storms, floods) for a city.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    fn get_alerts(
        &self,
        Parameters(args): Parameters<AlertsArgs>,
    ) -> Result<Json<Alerts>, ErrorData> {
        let (name, city) = self.city(&args.city)?;
        let summary = if city.alerts.is_empty() {
            format!("No active alerts for {name}.")
        } else {
            city.alerts
                .iter()
                .map(|a| format!("{} ({}): {}", a.event, a.severity, a.text))
                .collect::<Vec<_>>()
                .join(" ")
        };
        Ok(Json(Alerts {
            city: name.clone(),
            count: city.alerts.len(),
            alerts: city.alerts.clone(),
            summary,
        }))
    }

    #[tool(
        description = "The cities this server has forecasts for.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    fn list_cities(&self) -> Json<Cities> {
        Json(Cities {
            cities: self.cities.keys().cloned().collect(),
        })
    }
}

#[tool_handler]
impl ServerHandler for Weather {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(
                "weather-server",
                env!("CARGO_PKG_VERSION"),
            ))
            .with_instructions("Forecasts and alerts for a few cities, from a bundled dataset.")
    }
}

/// An MCP weather server over Streamable HTTP, from a bundled dataset.
#[derive(Debug, Parser)]
#[command(version)]
struct Cli {
    /// Port to bind (0: any free port).
    #[arg(long, default_value_t = 4484)]
    port: u16,
    /// Address to bind.
    #[arg(long, default_value_t = IpAddr::V4(Ipv4Addr::LOCALHOST))]
    host: IpAddr,
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let cli = Cli::parse();
    let weather = Weather::new();
    let service: StreamableHttpService<Weather, LocalSessionManager> = StreamableHttpService::new(
        move || Ok(weather.clone()),
        Arc::default(),
        StreamableHttpServerConfig::default().with_legacy_session_mode(true),
    );
    let app = axum::Router::new().nest_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind(SocketAddr::new(cli.host, cli.port)).await?;
    let bound = listener.local_addr()?;
    let mut stdout = std::io::stdout();
    writeln!(stdout, "listening http://{bound}/mcp")?;
    stdout.flush()?;
    axum::serve(listener, app).await
}
