"""Text banks of the synthetic corpora (native text per language; lexically
neutral sentences and dialogue lines that carry no emotion words)."""

from __future__ import annotations

# Native sentences per ISO 639-1 code; espeak voice names in ESPEAK_VOICE.
LANGUAGE_SENTENCES: dict[str, tuple[str, ...]] = {
    "en": (
        "The train to the city leaves at half past eight.",
        "Please put the books back on the second shelf.",
        "My neighbour grows tomatoes in a small garden.",
        "We will meet in front of the library on Monday.",
        "The museum is closed during the winter holidays.",
        "He bought a new bicycle with a blue frame.",
        "The weather report says it will rain tomorrow.",
        "She is learning to play the piano in the evenings.",
        "The restaurant on the corner serves fresh fish.",
        "They painted the kitchen walls a light yellow.",
    ),
    "es": (
        "El tren a la ciudad sale a las ocho y media.",
        "Por favor, pon los libros en el segundo estante.",
        "Mi vecino cultiva tomates en un jardín pequeño.",
        "Nos vemos delante de la biblioteca el lunes.",
        "El museo está cerrado durante las vacaciones de invierno.",
        "Él compró una bicicleta nueva con el cuadro azul.",
        "El pronóstico dice que mañana va a llover.",
        "Ella aprende a tocar el piano por las tardes.",
        "El restaurante de la esquina sirve pescado fresco.",
        "Pintaron las paredes de la cocina de amarillo claro.",
    ),
    "fr": (
        "Le train pour la ville part à huit heures et demie.",
        "Remets les livres sur la deuxième étagère, s'il te plaît.",
        "Mon voisin cultive des tomates dans un petit jardin.",
        "Nous nous retrouvons devant la bibliothèque lundi.",
        "Le musée est fermé pendant les vacances d'hiver.",
        "Il a acheté un nouveau vélo avec un cadre bleu.",
        "La météo annonce de la pluie pour demain.",
        "Elle apprend à jouer du piano le soir.",
        "Le restaurant du coin sert du poisson frais.",
        "Ils ont peint les murs de la cuisine en jaune clair.",
    ),
    "de": (
        "Der Zug in die Stadt fährt um halb neun ab.",
        "Bitte stell die Bücher zurück in das zweite Regal.",
        "Mein Nachbar baut Tomaten in einem kleinen Garten an.",
        "Wir treffen uns am Montag vor der Bibliothek.",
        "Das Museum ist in den Winterferien geschlossen.",
        "Er hat ein neues Fahrrad mit blauem Rahmen gekauft.",
        "Der Wetterbericht sagt für morgen Regen voraus.",
        "Sie lernt abends Klavier zu spielen.",
        "Das Restaurant an der Ecke serviert frischen Fisch.",
        "Sie haben die Küchenwände hellgelb gestrichen.",
    ),
    "it": (
        "Il treno per la città parte alle otto e mezza.",
        "Per favore rimetti i libri sul secondo scaffale.",
        "Il mio vicino coltiva pomodori in un piccolo giardino.",
        "Ci vediamo davanti alla biblioteca lunedì.",
        "Il museo è chiuso durante le vacanze invernali.",
        "Ha comprato una bicicletta nuova con il telaio blu.",
        "Le previsioni dicono che domani pioverà.",
        "Lei impara a suonare il pianoforte la sera.",
    ),
    "pt": (
        "O comboio para a cidade parte às oito e meia.",
        "Por favor, coloca os livros na segunda prateleira.",
        "O meu vizinho cultiva tomates num pequeno jardim.",
        "Encontramo-nos em frente à biblioteca na segunda-feira.",
        "O museu está fechado durante as férias de inverno.",
        "Ele comprou uma bicicleta nova com o quadro azul.",
        "A previsão diz que amanhã vai chover.",
        "Ela aprende a tocar piano à noite.",
    ),
    "nl": (
        "De trein naar de stad vertrekt om half negen.",
        "Zet de boeken alsjeblieft terug op de tweede plank.",
        "Mijn buurman kweekt tomaten in een kleine tuin.",
        "We zien elkaar maandag voor de bibliotheek.",
        "Het museum is gesloten tijdens de wintervakantie.",
        "Hij kocht een nieuwe fiets met een blauw frame.",
        "Het weerbericht zegt dat het morgen gaat regenen.",
        "Zij leert 's avonds piano spelen.",
    ),
}

# Default espeak-ng language voice per ISO 639-1 code.
ESPEAK_VOICE: dict[str, str] = {
    "en": "en-us", "es": "es", "fr": "fr", "de": "de", "it": "it", "pt": "pt", "nl": "nl",
}

# Lexically neutral English sentences (no emotion words): speaker, naturalness and
# counterfactual corpora.
NEUTRAL_SENTENCES: tuple[str, ...] = (
    "The meeting has been moved to the room on the third floor.",
    "I left the keys on the table next to the window.",
    "The package will arrive sometime on Thursday afternoon.",
    "We need two more chairs for the dinner on Saturday.",
    "The bus stops at the corner every fifteen minutes.",
    "She said the report is on the shared drive.",
    "There are four apples and a loaf of bread in the bag.",
    "The store closes at nine on weekdays.",
    "He parked the car behind the old post office.",
    "The numbers for last month are in the second column.",
    "You can take the stairs or the elevator to the lobby.",
    "The printer on this floor is out of paper.",
    "My sister moved to a new apartment in March.",
    "The train was twenty minutes late this morning.",
    "I will call you when the results come in.",
    "The plants on the balcony need water every day.",
    "They changed the password for the office network.",
    "The concert starts at eight and ends at ten.",
    "Our flight lands at the airport just after noon.",
    "The letter is in the top drawer of the desk.",
    "He ordered the same dish as last time.",
    "The teacher handed out the forms before lunch.",
    "We painted the fence in the back yard on Sunday.",
    "The doctor will see you in a few minutes.",
    "The coffee machine is next to the sink.",
    "I found the charger in the back seat of the car.",
    "The lecture covers the second half of the book.",
    "She counted the boxes in the storage room twice.",
    "The road to the lake is closed until Friday.",
    "My brother called about the plans for the weekend.",
)

# Dialogue lines (lexically neutral; the emotion is carried only by prosody).
USER_LINES: tuple[str, ...] = (
    "I am calling about the order I placed last week.",
    "The delivery was supposed to arrive on Tuesday.",
    "I checked the tracking number this morning.",
    "It says the parcel is still at the depot.",
    "I need it before the end of the month.",
    "Can you tell me what happens next?",
    "I already sent the receipt by email.",
    "The address on the account is the new one.",
    "I have been a customer for about three years.",
    "So the parcel will leave the depot tomorrow.",
    "I would like a confirmation by text message.",
    "My account number ends in four seven two.",
    "The second item in the order is a lamp.",
    "I tried the website but the page did not load.",
    "That is the same answer I got on Friday.",
    "Please note that I work until six.",
)
ASSISTANT_LINES: tuple[str, ...] = (
    "Thank you for calling. How can I help you today?",
    "Let me look up the order for you.",
    "I can see the order in our system.",
    "The parcel was scanned at the depot yesterday.",
    "I will send a request to the delivery team.",
    "You should receive an update within one day.",
    "Could you confirm the postcode for the address?",
    "I have added a note to your account.",
    "The confirmation will be sent to your phone.",
    "Is there anything else I can check for you?",
    "The lamp is listed as a separate shipment.",
    "I understand. I will check that for you now.",
    "The website is being updated this week.",
    "I have updated the delivery window.",
    "Thank you for waiting while I checked.",
    "The request has been registered.",
)

__all__ = [
    "ASSISTANT_LINES", "ESPEAK_VOICE", "LANGUAGE_SENTENCES", "NEUTRAL_SENTENCES",
    "USER_LINES",
]
