/** The 50 states, DC and the territories, by name; stored as the 2-letter upper-case code (decisions.md 3). */
const STATES: Record<string, string> = {
  AL: 'Alabama', AK: 'Alaska', AZ: 'Arizona', AR: 'Arkansas', CA: 'California', CO: 'Colorado',
  CT: 'Connecticut', DE: 'Delaware', FL: 'Florida', GA: 'Georgia', HI: 'Hawaii', ID: 'Idaho',
  IL: 'Illinois', IN: 'Indiana', IA: 'Iowa', KS: 'Kansas', KY: 'Kentucky', LA: 'Louisiana',
  ME: 'Maine', MD: 'Maryland', MA: 'Massachusetts', MI: 'Michigan', MN: 'Minnesota',
  MS: 'Mississippi', MO: 'Missouri', MT: 'Montana', NE: 'Nebraska', NV: 'Nevada',
  NH: 'New Hampshire', NJ: 'New Jersey', NM: 'New Mexico', NY: 'New York', NC: 'North Carolina',
  ND: 'North Dakota', OH: 'Ohio', OK: 'Oklahoma', OR: 'Oregon', PA: 'Pennsylvania',
  RI: 'Rhode Island', SC: 'South Carolina', SD: 'South Dakota', TN: 'Tennessee', TX: 'Texas',
  UT: 'Utah', VT: 'Vermont', VA: 'Virginia', WA: 'Washington', WV: 'West Virginia',
  WI: 'Wisconsin', WY: 'Wyoming', DC: 'District of Columbia', PR: 'Puerto Rico', GU: 'Guam',
  VI: 'U.S. Virgin Islands', AS: 'American Samoa', MP: 'Northern Mariana Islands',
};

const BY_KEY = new Map<string, string>();
for (const [code, name] of Object.entries(STATES)) {
  BY_KEY.set(code.toLowerCase(), code);
  BY_KEY.set(name.toLowerCase(), code);
}
BY_KEY.set('washington dc', 'DC');
BY_KEY.set('washington d.c.', 'DC');
BY_KEY.set('virgin islands', 'VI');
BY_KEY.set('us virgin islands', 'VI');

/** The 2-letter code for a state name or code in any case, or null when it is not one. */
export function stateCode(input: string): string | null {
  return BY_KEY.get(input.trim().replace(/\s+/g, ' ').toLowerCase()) ?? null;
}
