package embed

// The built-in embedder's lexical knowledge, written by hand for the
// vocabulary of software tools: it is general (verbs and nouns of APIs,
// developer and office work), not tuned to any query set.
//
// conceptGroups: each line is one concept; its words are near-synonyms in
// the sense a tool request uses them. A word may stand in several lines.
const conceptGroups = `
create make new add open start spawn generate build compose draft register provision insert
delete remove erase destroy drop purge trash discard uninstall wipe cancel revoke forget
update edit change modify set alter patch rename adjust amend rewrite configure
list enumerate show all browse index catalog inventory
get fetch retrieve read load obtain lookup look view see inspect display detail
search find query lookup locate discover filter grep seek
send post deliver dispatch notify message ping forward reply
message msg chat dm text note post conversation
email mail gmail inbox mailbox envelope
calendar schedule event meeting appointment invite availability booking agenda slot
user member person people account profile teammate colleague employee contact
team group org organization organisation workspace company
channel room thread conversation
file document doc attachment upload blob object asset readme
folder directory dir path tree
repository repo project codebase source
issue ticket bug task defect incident problem story epic card item
pull merge pr mr review diff patch changeset
commit revision changeset history log
branch ref tag release version
comment reply annotation remark feedback note
payment charge pay invoice bill billing refund transaction checkout subscription money
customer client buyer account subscriber lead prospect
deal opportunity sale pipeline revenue quote
oncall pager rota shift escalation duty
alert alarm incident outage page warning notification
error exception crash failure stacktrace bug fault
metric metrics stat stats statistic measurement telemetry monitoring dashboard
log logs logging trace event audit
database db sql table schema row record query postgres postgresql mysql
table sheet spreadsheet grid row column cell
container docker image pod cluster node deployment kubernetes k8s
deploy deployment rollout release ship publish launch
restart reboot reload restart rollback revert undo
scale replicas resize autoscale
secret credential token key password apikey
permission access role acl grant privilege share
bucket storage s3 blob object
weather forecast temperature rain snow wind climate sunny cloudy umbrella storm
map maps location place address geocode coordinates direction route distance navigation restaurant cafe shop venue business
web internet online website page site url link browse
screenshot capture snapshot screen picture image photo
click press tap button select
type fill input enter form field
navigate goto visit open browse
memory remember know knowledge graph entity relation observation fact recall
task todo assignment job work item chore
status state health progress condition
summary summarize digest overview recap brief
download export save backup dump archive
upload import attach ingest store put
copy duplicate clone fork
move transfer relocate migrate
close resolve finish complete done archive
reopen restore recover undelete unarchive
assign assignee owner allocate delegate
label tag category classify
priority urgency severity importance
due deadline date time when
today tonight tomorrow now current week weekend
cost price spend expense budget amount fee
run execute invoke trigger launch call perform
workflow pipeline action job build ci
test check verify validate lint
health uptime heartbeat ping alive
translate language translation
video call meet zoom conference
phone call sms number dial
note page wiki doc knowledge notion
spreadsheet excel csv sheet
presentation slide deck
chart graph plot visualization
search google bing query lookup
news headline article story
stock price ticker market quote
password secret credential login auth authentication signin
session login signin logon auth
user signup register onboard invite
star favorite bookmark like
follow subscribe watch
mute silence snooze
reaction emoji react
pin pinned sticky
upcoming next future scheduled
recent latest last newest new
old previous past earlier history
big large heavy
slow latency performance speed
cheap cheaper cheapest
request call api endpoint network http traffic
refund reimburse chargeback money
forecast prediction outlook upcoming tomorrow
`

// translations maps words of other languages to English words. It covers
// the core verbs and nouns of tool requests in Spanish, German, French,
// Portuguese and Chinese.
const translations = `
crear:create crea:create nuevo:new nueva:new añadir:add agregar:add abrir:open abre:open
borrar:delete eliminar:delete elimina:delete borra:delete quitar:remove
actualizar:update actualiza:update cambiar:change editar:edit modificar:modify
listar:list lista:list mostrar:show muestra:show muéstrame:show ver:view buscar:search busca:search encontrar:find encuentra:find
enviar:send envía:send envia:send mandar:send manda:send
mensaje:message mensajes:messages correo:email correos:emails
calendario:calendar evento:event eventos:events reunión:meeting reunion:meeting cita:appointment
usuario:user usuarios:users equipo:team canal:channel
archivo:file archivos:files fichero:file carpeta:folder directorio:directory documento:document
repositorio:repository incidencia:issue incidencias:issues problema:issue error:error errores:errors tarea:task tareas:tasks
pago:payment pagos:payments factura:invoice facturas:invoices cliente:customer clientes:customers reembolso:refund cobro:charge
guardia:oncall turno:shift alerta:alert alertas:alerts
base:database datos:data tabla:table consulta:query
contenedor:container imagen:image registro:log registros:logs
clima:weather tiempo:weather pronóstico:forecast lluvia:rain
mapa:map dirección:address ruta:route lugar:place
página:page captura:screenshot pantalla:screen
hoy:today mañana:tomorrow semana:week esta:this quién:who quien:who
rama:branch fusionar:merge comentario:comment comentarios:comments etiqueta:label
reiniciar:restart desplegar:deploy escalar:scale
memoria:memory recuerda:remember recordar:remember
erstellen:create erstelle:create neu:new neue:new neuen:new hinzufügen:add öffnen:open
löschen:delete lösche:delete entfernen:remove entferne:remove
aktualisieren:update ändern:change ändere:change bearbeiten:edit
auflisten:list liste:list zeige:show zeigen:show anzeigen:show suchen:search suche:search finden:find finde:find
senden:send sende:send schicken:send schicke:send
nachricht:message nachrichten:messages mail:email e-mail:email
kalender:calendar termin:appointment termine:appointments besprechung:meeting
benutzer:user nutzer:user kanal:channel
datei:file dateien:files ordner:folder verzeichnis:directory dokument:document
fehler:error ticket:ticket aufgabe:task aufgaben:tasks
zahlung:payment zahlungen:payments rechnung:invoice rechnungen:invoices kunde:customer kunden:customers rückerstattung:refund
bereitschaft:oncall dienst:duty alarm:alert
datenbank:database tabelle:table abfrage:query
wetter:weather vorhersage:forecast regen:rain
karte:map adresse:address route:route
seite:page bildschirmfoto:screenshot
heute:today morgen:tomorrow woche:week wer:who
zweig:branch kommentar:comment kommentare:comments
neu starten:restart bereitstellen:deploy skalieren:scale
gedächtnis:memory merken:remember merke:remember
créer:create crée:create supprimer:delete envoyer:send envoie:send chercher:search cherche:search rechercher:search
fichier:file dossier:folder facture:invoice client:customer paiement:payment réunion:meeting
météo:weather carte:map aujourd'hui:today utilisateur:user équipe:team
criar:create enviar:send mensagem:message arquivo:file pasta:folder pagamento:payment fatura:invoice reunião:meeting tempo:weather
创建:create 新建:create 添加:add 打开:open 删除:delete 移除:remove 更新:update 修改:modify 编辑:edit
列出:list 列表:list 显示:show 查看:view 搜索:search 查找:find 查询:query 找:find
发送:send 发:send 消息:message 邮件:email 电子邮件:email 信息:message
日历:calendar 事件:event 会议:meeting 日程:schedule 预约:appointment
用户:user 团队:team 频道:channel 成员:member
文件:file 文件夹:folder 目录:directory 文档:document
仓库:repository 代码库:repository 问题:issue 工单:ticket 错误:error 任务:task 缺陷:bug
支付:payment 付款:payment 发票:invoice 客户:customer 退款:refund 订阅:subscription
值班:oncall 告警:alert 警报:alert 事故:incident
数据库:database 表:table 查询:query 记录:record
容器:container 镜像:image 日志:log 集群:cluster
天气:weather 预报:forecast 下雨:rain 温度:temperature
地图:map 地址:address 路线:route 地点:place 距离:distance
网页:page 网站:website 截图:screenshot 屏幕:screen 点击:click
今天:today 明天:tomorrow 本周:week 谁:who
分支:branch 合并:merge 评论:comment 标签:label 拉取请求:pull
重启:restart 部署:deploy 扩容:scale
记住:remember 记忆:memory 知识:knowledge
存储桶:bucket 上传:upload 下载:download
`
