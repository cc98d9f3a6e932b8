// The scenario's one real tool: a fixed weather table. An unknown city throws, as a real
// service client would.

const TABLE = {
  Paris: { city: 'Paris', tempC: 18, conditions: 'sunny' },
  Berlin: { city: 'Berlin', tempC: 12, conditions: 'rain' },
};

export function getWeather(city) {
  const row = TABLE[city];
  if (!row) {
    throw new Error(`weather service: unknown city ${city}`);
  }
  return { ...row };
}

export const QUESTION = "What's the weather in Paris and Berlin?";
