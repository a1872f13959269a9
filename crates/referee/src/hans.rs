//! The referee's Chinese in both scripts: its messages are written in Traditional characters
//! (as the 2002 rules' traditional edition); Simplified is derived here, character by character,
//! from one table that covers every character the referee writes. Article references are given
//! in the rules' own wording, 第十八條第二款, not 第18條2款.

/// Traditional → Simplified for the characters the referee's messages use (generated with
/// OpenCC's t2s table, then 著 → 着 as Go writes 着手, 虚着). Sorted by the Traditional character.
const TRADITIONAL_TO_SIMPLIFIED: &[(char, char)] = &[
    ('並', '并'),
    ('亂', '乱'),
    ('兩', '两'),
    ('則', '则'),
    ('剛', '刚'),
    ('動', '动'),
    ('勝', '胜'),
    ('單', '单'),
    ('執', '执'),
    ('實', '实'),
    ('將', '将'),
    ('對', '对'),
    ('後', '后'),
    ('從', '从'),
    ('復', '复'),
    ('應', '应'),
    ('揀', '拣'),
    ('擋', '挡'),
    ('據', '据'),
    ('擺', '摆'),
    ('擾', '扰'),
    ('攝', '摄'),
    ('數', '数'),
    ('時', '时'),
    ('會', '会'),
    ('條', '条'),
    ('棄', '弃'),
    ('機', '机'),
    ('權', '权'),
    ('歸', '归'),
    ('氣', '气'),
    ('決', '决'),
    ('準', '准'),
    ('為', '为'),
    ('無', '无'),
    ('爭', '争'),
    ('現', '现'),
    ('環', '环'),
    ('畢', '毕'),
    ('發', '发'),
    ('盤', '盘'),
    ('確', '确'),
    ('種', '种'),
    ('約', '约'),
    ('終', '终'),
    ('結', '结'),
    ('經', '经'),
    ('編', '编'),
    ('繼', '继'),
    ('續', '续'),
    ('罰', '罚'),
    ('與', '与'),
    ('著', '着'),
    ('處', '处'),
    ('虛', '虚'),
    ('號', '号'),
    ('規', '规'),
    ('計', '计'),
    ('記', '记'),
    ('許', '许'),
    ('該', '该'),
    ('認', '认'),
    ('誤', '误'),
    ('請', '请'),
    ('譜', '谱'),
    ('議', '议'),
    ('讀', '读'),
    ('變', '变'),
    ('讓', '让'),
    ('負', '负'),
    ('賽', '赛'),
    ('輪', '轮'),
    ('輸', '输'),
    ('這', '这'),
    ('連', '连'),
    ('過', '过'),
    ('違', '违'),
    ('選', '选'),
    ('錄', '录'),
    ('錯', '错'),
    ('長', '长'),
    ('開', '开'),
    ('間', '间'),
    ('際', '际'),
    ('雙', '双'),
    ('須', '须'),
    ('顏', '颜'),
    ('駁', '驳'),
    ('點', '点'),
];

/// The same in both scripts: every other character the referee's messages use. A message with
/// a character in neither list fails the test below, so a new word is never left unconverted.
#[cfg(test)]
const SAME_IN_BOTH: &str = "一七三上下不中之九了予二五些交以但位使依像允先全八六再出判到前加劫化十即原又叉取另可合同否含告和哪四回在均外失始子完定尚局已序建形律循悔意慎成或手找拿按挪掉排提改放故效散新方星更有未本材果枰格棋次款止正此死比法消清漏理生用由白的目相看示禁秒移空立符第等算缺者而能至致色若落行表被裁警走起超辨造遮重附零面黑";

/// The text in Simplified characters.
pub fn to_simplified(traditional: &str) -> String {
    traditional
        .chars()
        .map(|c| match TRADITIONAL_TO_SIMPLIFIED.binary_search_by_key(&c, |&(t, _)| t) {
            Ok(i) => TRADITIONAL_TO_SIMPLIFIED[i].1,
            Err(_) => c,
        })
        .collect()
}

/// A number in Chinese numerals (1–99), as article numbers are written: 2 → 二, 18 → 十八, 20 → 二十.
fn chinese_number(n: u32) -> String {
    const DIGITS: [char; 10] = ['零', '一', '二', '三', '四', '五', '六', '七', '八', '九'];
    let digit = |d: u32| DIGITS[d as usize % 10];
    match n {
        0..=9 => digit(n).to_string(),
        10..=19 => format!("十{}", if n == 10 { String::new() } else { digit(n % 10).to_string() }),
        20..=99 => format!(
            "{}十{}",
            digit(n / 10),
            if n.is_multiple_of(10) { String::new() } else { digit(n % 10).to_string() }
        ),
        _ => n.to_string(),
    }
}

/// Article references in the rules' own wording: 第18條2款 → 第十八條第二款, 第2條 → 第二條.
pub fn chinese_articles(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let number_at = |from: usize| -> (Option<u32>, usize) {
        let end = (from..chars.len()).find(|&k| !chars[k].is_ascii_digit()).unwrap_or(chars.len());
        let digits: String = chars[from..end].iter().collect();
        (digits.parse().ok(), end)
    };
    while i < chars.len() {
        if chars[i] == '第' {
            if let (Some(article), after) = number_at(i + 1) {
                if chars.get(after) == Some(&'條') {
                    out.push_str(&format!("第{}條", chinese_number(article)));
                    i = after + 1;
                    if let (Some(clause), end) = number_at(i) {
                        if chars.get(end) == Some(&'款') {
                            out.push_str(&format!("第{}款", chinese_number(clause)));
                            i = end + 1;
                        }
                    }
                    continue;
                }
            }
        }
        out.push(chars[i]);
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_sorted_and_articles_read_as_in_the_rules() {
        assert!(TRADITIONAL_TO_SIMPLIFIED.windows(2).all(|w| w[0].0 < w[1].0), "sorted for binary search");
        assert_eq!(to_simplified("黑將悔棋。裁判確認前該手記為Q16"), "黑将悔棋。裁判确认前该手记为Q16");
        assert_eq!(to_simplified("虛著"), "虚着");
        assert_eq!(chinese_articles("（第18條2款）"), "（第十八條第二款）");
        assert_eq!(
            chinese_articles("第18條3款、第20條1款；第2條；第24條"),
            "第十八條第三款、第二十條第一款；第二條；第二十四條"
        );
        assert_eq!(chinese_articles("第17手"), "第17手", "move numbers stay in digits");
        assert_eq!(to_simplified(&chinese_articles("第17條1款")), "第十七条第一款");
    }

    #[test]
    fn every_character_the_referee_writes_is_known_in_both_scripts() {
        let sources = [
            include_str!("referee/mod.rs"),
            include_str!("referee/arbiter.rs"),
            include_str!("referee/infractions.rs"),
            include_str!("referee/inputs.rs"),
            include_str!("referee/record.rs"),
            include_str!("referee/snapshot.rs"),
            include_str!("referee/start.rs"),
            include_str!("messages.rs"),
            include_str!("event.rs"),
            include_str!("explain.rs"),
            include_str!("stabilise.rs"),
        ];
        let unknown: std::collections::BTreeSet<char> = sources
            .iter()
            .flat_map(|s| s.chars())
            .filter(|c| ('\u{3400}'..='\u{9fff}').contains(c))
            .filter(|c| {
                TRADITIONAL_TO_SIMPLIFIED.binary_search_by_key(c, |&(t, _)| t).is_err() && !SAME_IN_BOTH.contains(*c)
            })
            .collect();
        assert!(unknown.is_empty(), "add these to the table (or to SAME_IN_BOTH): {unknown:?}");
    }
}
